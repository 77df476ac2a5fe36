#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import KindlingCore
import Logging
import Synchronization

/// A namespace's past, from its data directory: keeps what a new snapshot makes redundant (when a
/// `HistoryPolicy` is set), purges what is older than the policy allows, and rebuilds the tree
/// as of any kept instant or lists the writes in a window.
///
/// Files move between the namespace's folder and `history/` only under `lock`, and a read holds
/// it while it lists and reads, so a read never misses a segment being retired. A retired
/// segment is renamed into `history/` at once (no copy, so a retirement costs the write path
/// nothing) and compressed later, when the namespace's log is quiet, on a thread of the lowest
/// priority (`HistoryCompressor`). Every step is crash-safe on its own: a rename is atomic, a
/// compressed copy is written whole before the plain one is deleted, and a rebuild lists a
/// segment found in both forms once, so a crash between steps leaves files the next pass
/// finishes.
final class NamespaceHistory: Sendable {
    /// When retired segments are compressed.
    enum Compression: Sendable {
        /// By `HistoryCompressor`, once the log is quiet (a running server).
        case background
        /// Before the retirement returns (the offline commands and tests, which wait for it).
        case inline
    }

    let directory: String
    let policy: HistoryPolicy?
    private let compression: Compression
    private let lock = Mutex(())
    /// A number that changes whenever the namespace's log is written (nil: never busy), so
    /// background compression waits for a quiet moment.
    let activity: (@Sendable () -> Int)?
    private let logger: Logger

    init(
        directory: String, policy: HistoryPolicy?, compression: Compression = .background, activity: (@Sendable () -> Int)? = nil,
        logger: Logger
    ) {
        self.activity = activity
        self.directory = directory
        self.policy = policy
        self.compression = compression
        self.logger = logger
    }

    /// After a snapshot at `sequence` is safely on disk, on the storage's snapshot queue: the
    /// segments and older snapshots it makes redundant are kept (segments renamed into
    /// `history/` and compressed later, snapshots at most one per `snapshotSpacing`) or, without
    /// a policy, deleted; then the purge runs.
    func retire(through sequence: UInt64, now: Int64 = HistoryTime.now()) {
        let segments = StorageLayout.segments(in: directory).filter { $0.start <= sequence }
        let snapshots = StorageLayout.snapshots(in: directory).filter { $0.start < sequence }
        guard let policy else {
            lock.withLock { _ in
                for file in segments + snapshots { try? FileManager.default.removeItem(atPath: file.path) }
            }
            return
        }
        do {
            try StorageLayout.createDirectory(StorageLayout.historyDirectory(directory))
        } catch {
            // The live files stay: recovery ignores what the snapshot covers, and the next
            // retirement tries again.
            logger.error("could not keep the log for history; trying again at the next snapshot: \(error)")
            return
        }
        lock.withLock { _ in
            for segment in segments {
                // Already kept whole (a retirement a crash cut short): the live copy goes.
                if FileManager.default.fileExists(atPath: StorageLayout.historySegmentPath(directory, startingAt: segment.start))
                    || rename(segment.path, StorageLayout.historyPlainSegmentPath(directory, startingAt: segment.start)) != 0
                {
                    try? FileManager.default.removeItem(atPath: segment.path)
                }
            }
            for snapshot in snapshots {
                let newestKept = HistoryFiles.scan(directory: directory).bases.last { !$0.isLive || $0.path == nil }
                let time = StorageLayout.stamp(snapshot.path)?.time ?? now
                if newestKept.map({ time - $0.time >= policy.spacingMilliseconds }) ?? true {
                    if rename(snapshot.path, StorageLayout.historySnapshotPath(directory, sequence: snapshot.start)) == 0 { continue }
                }
                try? FileManager.default.removeItem(atPath: snapshot.path)
            }
            StorageLayout.syncDirectory(StorageLayout.historyDirectory(directory))
            StorageLayout.syncDirectory(directory)
            purgeLocked(now: now)
        }
        compressKept()
    }

    /// Compresses the kept segments still plain: at once (`.inline`), or by the process's
    /// `HistoryCompressor` once the namespace's log is quiet (`.background`).
    func compressKept() {
        guard policy != nil else { return }
        switch compression {
        case .inline:
            compressPlainSegments()
        case .background:
            HistoryCompressor.shared.enqueue(self)
        }
    }

    /// Writes a compressed copy of each plain kept segment, then deletes the plain one (under
    /// the lock, so a read that listed it finishes first).
    func compressPlainSegments() {
        for (start, path) in StorageLayout.historyPlainSegments(in: directory) {
            let kept = StorageLayout.historySegmentPath(directory, startingAt: start)
            do {
                if !FileManager.default.fileExists(atPath: kept) { try compress(path, to: kept) }
                lock.withLock { _ in _ = try? FileManager.default.removeItem(atPath: path) }
            } catch {
                logger.warning("could not compress a kept log segment; it stays as it is: \(error)")
                return
            }
        }
    }

    /// Deletes what the policy no longer keeps (at start, and after each retirement).
    func purge(now: Int64 = HistoryTime.now()) {
        lock.withLock { _ in purgeLocked(now: now) }
    }

    /// At start, before any compression pass of this run: removes the compressed copies a pass
    /// the process's end interrupted left unfinished (never renamed into place).
    func removeUnfinished() {
        let folder = StorageLayout.historyDirectory(directory)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where name.hasSuffix(".tmp") {
            try? FileManager.default.removeItem(atPath: folder + "/" + name)
        }
    }

    private func purgeLocked(now: Int64) {
        guard let policy else { return }
        let deletions = HistoryPurgePlan.deletions(.scan(directory: directory), policy: policy, now: now)
        guard !deletions.isEmpty else { return }
        for path in deletions { try? FileManager.default.removeItem(atPath: path) }
        logger.debug("purged history", metadata: ["files": "\(deletions.count)"])
    }

    /// The whole tree as it was at `time` (milliseconds since 1970): the newest base no later
    /// than it, with every later write committed at or before it.
    func tree(at time: Int64) throws(HistoryError) -> Node {
        try lock.withLock { _ throws(HistoryError) -> Node in
            let files = HistoryFiles.scan(directory: directory)
            guard let base = files.base(atOrBefore: time) else { throw .beforeHistory(earliest: files.earliest) }
            var tree = DataTree(root: try load(base))
            try replay(files, after: base.sequence, until: { $0.time > time }) { tree.apply($0.write) }
            return tree.root
        }
    }

    /// The writes committed from `from` through `to` that wrote at, above or below `path`, the
    /// most recent `limit` of them, oldest first.
    func changes(at path: Path, from: Int64, through to: Int64, limit: Int) throws(HistoryError) -> [HistoryChange] {
        try lock.withLock { _ throws(HistoryError) -> [HistoryChange] in
            let files = HistoryFiles.scan(directory: directory)
            // Every write up to a base older than `from` is older still.
            let start = files.bases.last { $0.time < from } ?? files.bases.first
            guard let start else { return [] }
            var found: [HistoryChange] = []
            try replay(files, after: start.sequence, acrossImports: true, until: { $0.time > to }) { record in
                if record.time >= from, HistoryChange.touches(record, path) {
                    found.append(HistoryChange(record))
                    if found.count > limit { found.removeFirst() }
                }
            }
            return found
        }
    }

    /// Hands `body` every record after `sequence`, in order, up to the first for which `until`
    /// is true; a record missing is a `HistoryError.gap`, but for one: an import stores its
    /// data as a snapshot standing for a sequence number no record has, so a replay that finds
    /// just that number missing, with that snapshot, stops there (a rebuild that needed the
    /// import would have started from its snapshot), or with `acrossImports` goes on after it.
    private func replay(
        _ files: HistoryFiles, after sequence: UInt64, acrossImports: Bool = false, until: (LogRecord) -> Bool, _ body: (LogRecord) -> Void
    ) throws(HistoryError) {
        var next = sequence + 1
        for (index, segment) in files.segments.enumerated() {
            if let end = files.end(ofSegment: index), end < next { continue }
            for record in try records(of: segment) where record.sequence >= next {
                if record.sequence != next {
                    guard record.sequence == next + 1, files.bases.contains(where: { $0.sequence == next }) else { throw .gap(after: next - 1) }
                    guard acrossImports else { return }
                    next = record.sequence
                }
                if until(record) { return }
                body(record)
                next += 1
            }
        }
    }

    private func load(_ base: HistoryFiles.Base) throws(HistoryError) -> Node {
        guard let path = base.path else { return .empty }
        do {
            return try SnapshotFile.read(path).root
        } catch {
            throw .storage("\(error)")
        }
    }

    /// A segment's records; a live segment's unfinished last record (a write under way) is left
    /// out, as recovery would cut it.
    private func records(of segment: HistoryFiles.Segment) throws(HistoryError) -> [LogRecord] {
        do {
            let bytes = segment.path.hasSuffix(".gz") ? try NamespaceHistory.decompress(segment.path) : try StorageLayout.readFile(segment.path)
            return try LogSegmentReader.read(bytes, file: segment.path, repair: false).records
        } catch {
            throw .storage("\(error)")
        }
    }

    /// Writes `path` gzipped to `kept`, atomically.
    private func compress(_ path: String, to kept: String) throws {
        let bytes = try StorageLayout.readFile(path)
        try StorageLayout.writeAtomically(to: kept) { descriptor, temporary in
            let gzip = try GzipWriter(descriptor: descriptor, path: temporary)
            try bytes.withUnsafeBytes { try gzip.write($0) }
            try gzip.finish()
        }
    }

    /// The whole of a gzipped file.
    static func decompress(_ path: String) throws -> [UInt8] {
        let gzip = try GzipReader(path: path)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            let count = try chunk.withUnsafeMutableBytes { try gzip.read(into: $0) }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
        }
    }
}
