import Dispatch
import Foundation
import KindlingCore
import Logging
import Metrics
import Synchronization

/// One namespace's durable files: recovery at start, the log while running, snapshots in the
/// background.
final class NamespaceStorage: Sendable {
    /// What recovery found.
    struct Recovered: Sendable {
        var root: Node
        var lastSequence: UInt64
        var snapshotSequence: UInt64
        var snapshotBytes: Int
        var replayedRecords: Int
        var warnings: [String]
        /// When the last write in the files was committed, or an instant no earlier than it (the
        /// snapshot's time, when no record follows it); 0 when not known.
        var lastTime: Int64 = 0
    }

    let directory: String
    let log: WriteAheadLog
    /// The namespace's past: what snapshots make redundant is kept here, or deleted.
    let history: NamespaceHistory
    private let configuration: StorageConfiguration
    private let snapshots: DispatchQueue
    private let logger: Logger
    private let metrics: ServerMetrics?

    init(
        directory: String,
        configuration: StorageConfiguration,
        startSequence: UInt64,
        budget: OpenLogBudget? = nil,
        logger: Logger,
        metrics: ServerMetrics? = nil,
        onDurable: @escaping @Sendable (UInt64) -> Void
    ) throws {
        self.directory = directory
        self.metrics = metrics
        self.configuration = configuration
        self.logger = logger
        self.snapshots = DispatchQueue(label: "kindling.snapshots.\(directory)")
        try StorageLayout.createDirectory(directory)
        let log = WriteAheadLog(
            directory: directory, mode: configuration.fsync, startSequence: startSequence, idleTimeout: configuration.logIdleTimeout,
            budget: budget, logger: logger, metrics: metrics, onDurable: onDurable
        )
        self.log = log
        self.history = NamespaceHistory(
            directory: directory, policy: configuration.history, activity: { [weak log] in log?.sizeSinceRotation ?? 0 }, logger: logger)
    }

    /// When the last snapshot started (or the storage opened).
    private let lastSnapshot = Mutex(ContinuousClock.now)

    /// True when the log has grown enough, or has held writes long enough, since the last
    /// snapshot to write a new one.
    var wantsSnapshot: Bool {
        let size = log.sizeSinceRotation
        if size >= configuration.snapshotAfterBytes { return true }
        return size > 0 && ContinuousClock.now - lastSnapshot.withLock { $0 } >= configuration.snapshotInterval
    }

    /// Starts a snapshot of `root`, the tree as of `sequence`: the log moves to a new segment at
    /// once; the snapshot is written in the background from the immutable root while writes go
    /// on; once it is safely in place, the segments and snapshots it makes redundant are deleted.
    func snapshot(_ root: Node, sequence: UInt64) {
        lastSnapshot.withLock { $0 = ContinuousClock.now }
        log.rotate(startingAt: sequence + 1)
        snapshots.async { [directory, logger, log, metrics, history] in
            let started = ContinuousClock.now
            do {
                let written = try SnapshotFile.write(root, to: StorageLayout.snapshotPath(directory, sequence: sequence))
                // Records the log could not write (a failing disk) are in the snapshot: the log
                // drops them and rotates, which clears its failure.
                log.covered(through: sequence)
                // The rotation must have happened before the old segments are listed, or a
                // segment opened after the listing would outlive the snapshot that covers it.
                log.drain()
                history.retire(through: sequence)
                metrics?.snapshotDuration.record(duration: ContinuousClock.now - started)
                metrics?.snapshotBytes.set(written.compressedBytes)
                logger.info(
                    "wrote snapshot",
                    metadata: [
                        "sequence": "\(sequence)", "bytes": "\(written.compressedBytes)", "raw-bytes": "\(written.bytes)",
                        "duration": "\(ContinuousClock.now - started)",
                    ]
                )
            } catch {
                logger.error("snapshot at sequence \(sequence) failed; the log is kept: \(error)")
            }
        }
    }

    /// Purges history the policy no longer keeps, in the background (at start: a namespace that
    /// takes no writes retires nothing, so it would never purge otherwise).
    func purgeHistory() {
        snapshots.async { [history] in
            history.removeUnfinished()
            history.purge()
            history.compressKept()
        }
    }

    /// Waits for queued snapshots and log writes.
    func drain() {
        log.drain()
        snapshots.sync {}
    }

    /// Loads a namespace's data: the newest readable snapshot, then every later log record in
    /// order. A torn last record is cut off (with a warning); damage in the middle of a log
    /// stops the start, unless `repair` is set.
    static func recover(directory: String, repair: Bool, logger: Logger) throws -> Recovered {
        var warnings: [String] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.hasSuffix(".tmp") {
            // A snapshot (or other atomic write) cut short by a crash: never renamed into place,
            // so nothing refers to it.
            if (try? FileManager.default.removeItem(atPath: directory + "/" + name)) != nil {
                logger.notice("removed an unfinished file left by an interrupted write", metadata: ["file": "\(name)"])
            }
        }
        var root = Node.empty
        var snapshotSequence: UInt64 = 0
        var snapshotBytes = 0
        var lastTime: Int64 = 0
        for snapshot in StorageLayout.snapshots(in: directory).reversed() {
            do {
                (root, snapshotBytes) = try SnapshotFile.read(snapshot.path)
                snapshotSequence = snapshot.start
                lastTime = StorageLayout.stamp(snapshot.path)?.time ?? 0
                break
            } catch {
                warnings.append("skipped \(error)")
            }
        }
        var tree = DataTree(root: root)
        var lastSequence = snapshotSequence
        var replayed = 0
        let segments = StorageLayout.segments(in: directory)
        for (position, segment) in segments.enumerated() {
            let isLast = position == segments.count - 1
            let bytes = try StorageLayout.readFile(segment.path)
            let contents = try LogSegmentReader.read(bytes, file: segment.path, repair: repair)
            if let torn = contents.tornTail {
                guard isLast || repair else {
                    throw StorageError.corruptLog(file: segment.path, offset: contents.validLength, reason: torn)
                }
                warnings.append("cut off \(torn) (\(bytes.count - contents.validLength) bytes)")
                try truncate(segment.path, to: contents.validLength)
            }
            for record in contents.records where record.sequence > lastSequence {
                tree.apply(record.write)
                lastSequence = record.sequence
                lastTime = record.time
                replayed += 1
            }
        }
        for warning in warnings { logger.warning("\(warning)") }
        return Recovered(
            root: tree.root,
            lastSequence: lastSequence,
            snapshotSequence: snapshotSequence,
            snapshotBytes: snapshotBytes,
            replayedRecords: replayed,
            warnings: warnings,
            lastTime: lastTime
        )
    }

    private static func truncate(_ path: String, to length: Int) throws {
        guard let handle = FileHandle(forWritingAtPath: path) else { throw StorageError.io("cannot open \(path) to cut its torn tail") }
        defer { try? handle.close() }
        do {
            try handle.truncate(atOffset: UInt64(length))
            try handle.synchronize()
        } catch {
            throw StorageError.io("cannot cut the torn tail of \(path): \(error)")
        }
    }
}
