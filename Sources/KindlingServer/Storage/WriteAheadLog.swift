#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Logging
import Metrics
import Synchronization

/// How hard the log works to make a write durable before it is acknowledged.
public enum FsyncMode: String, Sendable, CaseIterable {
    /// Every acknowledged write is on disk: acknowledgements wait for `fdatasync` of the batch
    /// holding them (group commit: writes arriving during one sync go together in the next).
    case always
    /// Acknowledged once written to the operating system; synced every second. A machine crash
    /// can lose the last second of acknowledged writes (a process crash loses none).
    case everysec
    /// Acknowledged once written to the operating system; never synced by Kindling. A machine
    /// crash can lose whatever the kernel had not yet written back.
    case never
}

/// An append-only log of committed writes for one namespace, with group commit.
///
/// `append` only queues bytes; one flush at a time runs on the log's own queue, writes
/// everything queued, syncs according to the mode, and then reports the last durable sequence
/// number. While a flush runs, new appends gather for the next one, so throughput grows with
/// load without weakening the promise. A failing write (a full disk) keeps the bytes queued,
/// marks the log unhealthy, and retries every second; nothing after the failure is reported
/// durable until it succeeds, or until a snapshot that covers the queued records is on disk.
///
/// The segment file is opened at the first write after start or rotation and closed again after
/// `idleTimeout` without writes, so a server with many namespaces holds descriptors only for the
/// ones being written; a server-wide `OpenLogBudget` closes the least recently written one when
/// too many are open.
///
/// `Sendable` without checks, and why that is safe: what callers on other threads touch is
/// `queued` (a `Mutex`) and `bytesSinceRotation` (an atomic); every other mutable property is
/// read and written only by code running on `queue`, the log's own serial queue (`flushQueued`,
/// the timers it schedules there, and `covered`/`drain`/`flushHere`, which enter it with `queue.sync`). The
/// budget closes another log's segment by scheduling that on the other log's queue.
final class WriteAheadLog: @unchecked Sendable {
    /// What waits for the next flush, in order: records, and rotations between them.
    private enum Item {
        case records([UInt8], lastSequence: UInt64)
        case rotate(UInt64)
    }

    private struct Queued {
        var items: [Item] = []
        /// A flush will take what is queued: one is on `queue`, or a caller of
        /// `append(encoded:through:flushingHere:)` owes one (`flushHere`).
        var scheduled = false
        /// A flush is writing what it took: a caller is not handed the next one, which would
        /// have it wait for this one first.
        var running = false
        var failure: String?
    }

    let directory: String
    let mode: FsyncMode
    private let queue: DispatchQueue
    private let queued = Mutex(Queued())
    private let onDurable: @Sendable (UInt64) -> Void
    private let syncData: @Sendable (Int32) -> Int32
    private let logger: Logger
    private let idleTimeout: Duration
    private let budget: OpenLogBudget?
    /// Times each flush's write and sync, and counts the log while it fails.
    private let metrics: ServerMetrics?
    // Confined to `queue`.
    private var descriptor: Int32 = -1
    private var fileLength = 0
    /// Where the segment must be cut before anything more is written, when cutting it after a
    /// failure failed too; confined to `queue`.
    private var pendingCut: Int?
    /// The records written since the last sync, and where in the segment they start (not in
    /// `never` mode): after a failure they are written again. A failed fdatasync may have
    /// dropped their pages from the cache unwritten, and a later sync that succeeds would not
    /// bring them back. Confined to `queue`.
    private var unsyncedItems: [Item] = []
    private var unsyncedStart: Int?
    private let bytesSinceRotation = Atomic<Int>(0)
    /// False after a sync that took longer than `slowSync`, until one does not: callers flush
    /// here only while syncs are fast.
    private let syncsAreFast = Atomic<Bool>(true)
    /// A sync longer than this is slow (5 ms; a healthy disk's takes under one).
    private let slowSync: Duration
    private var unsynced = false
    /// An everysec sync is scheduled.
    private var syncScheduled = false
    /// A check for closing the idle segment is scheduled.
    private var idleCheckScheduled = false
    private var lastWrite = ContinuousClock.now

    /// `syncData` is `fdatasync`; tests give one that fails, as a failing disk's does, and a
    /// `slowSync` of zero to have every sync count as slow.
    init(
        directory: String, mode: FsyncMode, startSequence: UInt64, idleTimeout: Duration = .seconds(60), budget: OpenLogBudget? = nil,
        logger: Logger, metrics: ServerMetrics? = nil, syncData: @escaping @Sendable (Int32) -> Int32 = { fdatasync($0) },
        slowSync: Duration = .milliseconds(5), onDurable: @escaping @Sendable (UInt64) -> Void
    ) {
        self.slowSync = slowSync
        self.syncData = syncData
        self.budget = budget
        self.metrics = metrics
        self.directory = directory
        self.mode = mode
        self.logger = logger
        self.onDurable = onDurable
        self.idleTimeout = idleTimeout
        self.segmentPath = StorageLayout.segmentPath(directory, startingAt: startSequence)
        self.queue = DispatchQueue(label: "kindling.log.\(directory)")
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// False while writes are failing; the namespace then refuses new writes.
    var isHealthy: Bool { queued.withLock { $0.failure == nil } }

    /// Bytes appended since the last rotation, to decide when to snapshot.
    var sizeSinceRotation: Int { bytesSinceRotation.load(ordering: .relaxed) }

    /// Queues records already encoded one after another (`LogRecord.encode(into:)`), the last
    /// of them `lastSequence`: the namespace encodes a block's writes straight into one buffer,
    /// without an array of records between.
    ///
    /// With `flushingHere`, in `always` mode, a log with nothing else to flush leaves the flush
    /// to the caller: it returns true, and the caller then owes a `flushHere()` (every append
    /// after it joins that flush). An event loop that ran a namespace's block itself syncs its
    /// writes itself, as Redis's loop does before it sleeps: no thread is woken for the sync,
    /// and the requests that arrive meanwhile gather for the next batch. Not while the log is
    /// failing or another flush runs, nor after a flush here or a sync that took over
    /// `slowSync`, so a slow disk does not hold the loop up for long.
    @discardableResult
    func append(encoded bytes: [UInt8], through lastSequence: UInt64, flushingHere: Bool = false) -> Bool {
        guard !bytes.isEmpty else { return false }
        bytesSinceRotation.add(bytes.count, ordering: .relaxed)
        let here = flushingHere && mode == .always && syncsAreFast.load(ordering: .relaxed)
        return enqueue(.records(bytes, lastSequence: lastSequence), flushingHere: here)
    }

    /// Runs, on the calling thread, the flush an append that returned true left to it, and
    /// returns its report: what waited for the writes is released when the caller runs it,
    /// after the flush. The caller runs it later, not inside its own work: what waits for a
    /// write (a REST response's promise) may run more requests on the calling thread.
    func flushHere() -> (@Sendable () -> Void)? {
        let started = ContinuousClock.now
        let durable = queue.sync { flushQueued(reporting: false) }
        // Waiting for the queue, a rotation or a new segment count too.
        if ContinuousClock.now - started > slowSync { syncsAreFast.store(false, ordering: .relaxed) }
        guard let durable else { return nil }
        return { [onDurable] in onDurable(durable) }
    }

    /// Starts a new segment for records from `sequence` on (after a snapshot that covers the
    /// ones before). Records appended before the call go to the old segment, later ones to the new.
    func rotate(startingAt sequence: UInt64) {
        bytesSinceRotation.store(0, ordering: .relaxed)
        enqueue(.rotate(sequence))
    }

    /// Queues `item`, and a flush for it unless one will take it already; with `flushingHere`,
    /// returns true instead of queueing the flush when the caller is to run it (`flushHere`).
    @discardableResult
    private func enqueue(_ item: Item, flushingHere: Bool = false) -> Bool {
        let owed = queued.withLock { state -> Bool? in
            state.items.append(item)
            guard !state.scheduled else { return nil }
            state.scheduled = true
            return flushingHere && state.failure == nil && !state.running
        }
        guard let owed else { return false }
        if !owed { queue.async { self.flushQueued() } }
        return owed
    }

    /// A snapshot holding every write through `sequence` is safely on disk: records still queued
    /// up to there (kept by a failing disk) need no log any more. They are dropped and reported
    /// durable, and the queue is flushed at once, so the rotation behind them runs and a log that
    /// failed only on its old segment is healthy again.
    func covered(through sequence: UInt64) {
        queue.sync {
            let dropped = queued.withLock { state -> Bool in
                let before = state.items.count
                state.items.removeAll { item in
                    if case .records(_, let last) = item { return last <= sequence }
                    return false
                }
                return state.items.count != before
            }
            if dropped {
                // The bytes of a failed append were cut from the old segment; it is deleted with
                // the others the snapshot covers.
                onDurable(sequence)
            }
            flushQueued()
        }
    }

    /// Waits until everything appended so far is written (and synced, in `always` mode).
    func drain() {
        queue.sync { _ = self.flushQueued() }
        queue.sync { self.syncIfNeeded() }
    }

    /// Writes what is queued, in order, syncing and reporting once per batch. Without
    /// `reporting`, returns the last sequence made durable instead of reporting it.
    @discardableResult
    private func flushQueued(reporting: Bool = true) -> UInt64? {
        var items = queued.withLock { state -> [Item] in
            defer {
                state.items = []
                state.scheduled = false
                state.running = true
            }
            return state.items
        }
        defer { queued.withLock { $0.running = false } }
        // The newest sequence made durable before a rotation, when not reporting.
        var reported: UInt64?
        // A cut that failed comes first: appending behind records that are to be written
        // again would leave both copies in the file.
        if let cut = pendingCut {
            do {
                if descriptor < 0 { try openSegment() }
                guard ftruncate(descriptor, off_t(cut)) == 0 else {
                    throw StorageError.io("cannot cut \(segmentPath) back to \(cut) bytes: \(String(cString: strerror(errno)))")
                }
                fileLength = cut
                pendingCut = nil
            } catch {
                fail(error, remaining: items)
                return nil
            }
        }
        var durable: UInt64?
        while !items.isEmpty {
            do {
                switch items[0] {
                case .records(let bytes, let last):
                    let started = ContinuousClock.now
                    try writeAll(bytes)
                    metrics?.logAppend.record(duration: ContinuousClock.now - started)
                    if mode != .never {
                        if unsyncedStart == nil { unsyncedStart = fileLength - bytes.count }
                        unsyncedItems.append(items[0])
                    }
                    durable = last
                case .rotate(let sequence):
                    if !unsyncedItems.isEmpty { try sync() }
                    if let durable {
                        if reporting { onDurable(durable) } else { reported = durable }
                    }
                    durable = nil
                    closeSegment()
                    segmentPath = StorageLayout.segmentPath(directory, startingAt: sequence)
                }
                items.removeFirst()
            } catch {
                syncFailed(error, remaining: items)
                return reported
            }
        }
        if durable != nil {
            do {
                if mode == .always { try sync() } else { unsynced = true }
            } catch {
                syncFailed(error, remaining: [])
                return reported
            }
        }
        // Everything queued went through: whatever failed before works again.
        let recovered = queued.withLock { state in
            defer { state.failure = nil }
            return state.failure != nil
        }
        if recovered {
            logger.notice("the log is writable again; acknowledging writes")
            metrics?.logFailing(false)
        }
        if reporting, let durable { onDurable(durable) }
        scheduleTimers()
        return durable ?? reported
    }

    /// After a flush: a sync a second later in everysec mode, and a check for closing the
    /// segment once it has been idle for `idleTimeout`; confined to `queue`.
    private func scheduleTimers() {
        if unsynced, mode == .everysec, !syncScheduled {
            syncScheduled = true
            queue.asyncAfter(deadline: .now() + 1) { [weak self] in
                guard let self else { return }
                self.syncScheduled = false
                self.syncIfNeeded()
            }
        }
        if descriptor >= 0, !idleCheckScheduled {
            idleCheckScheduled = true
            let wait = lastWrite + idleTimeout - ContinuousClock.now
            queue.asyncAfter(deadline: .now() + .nanoseconds(Int(max(0, wait / .nanoseconds(1))))) { [weak self] in
                guard let self else { return }
                self.idleCheckScheduled = false
                if ContinuousClock.now - self.lastWrite >= self.idleTimeout, self.isHealthy {
                    self.closeSegment()
                } else {
                    self.scheduleTimers()
                }
            }
        }
    }

    /// Puts what was not written (or not synced) back in front of anything queued since, cuts
    /// the file back to where that starts, and tries again in a second.
    private func fail(_ error: any Error, remaining: [Item]) {
        if descriptor >= 0, pendingCut == nil, ftruncate(descriptor, off_t(fileLength)) != 0 { pendingCut = fileLength }
        let first = queued.withLock { state -> Bool in
            state.items = remaining + state.items
            defer { state.failure = "\(error)" }
            return state.failure == nil
        }
        if first {
            logger.critical("writes to the log are failing; writes are refused until it recovers: \(error)")
            metrics?.logFailing(true)
        }
        queue.asyncAfter(deadline: .now() + 1) { self.flushQueued() }
    }

    /// After a failed write or sync: the records written since the last sync are cut from the
    /// segment and written again, ahead of `remaining`, once the log recovers.
    private func syncFailed(_ error: any Error, remaining: [Item]) {
        if let unsyncedStart { fileLength = unsyncedStart }
        let again = unsyncedItems
        unsyncedItems = []
        unsyncedStart = nil
        fail(error, remaining: again + remaining)
    }

    /// The periodic sync of everysec mode; a failure writes the records since the last sync
    /// again (they were acknowledged, and a failed sync may have dropped their pages).
    private func syncIfNeeded() {
        guard unsynced else { return }
        do {
            try sync()
        } catch {
            logger.error("fdatasync of the log failed: \(error)")
            syncFailed(error, remaining: [])
        }
    }

    private func writeAll(_ bytes: [UInt8]) throws {
        if descriptor < 0 { try openSegment() } else { budget?.used(self) }
        lastWrite = ContinuousClock.now
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw StorageError.io("write to \(segmentPath) failed: \(String(cString: strerror(errno)))")
                }
                offset += written
            }
        }
        fileLength += bytes.count
    }

    private func sync() throws {
        guard descriptor >= 0 else {
            unsynced = false
            return
        }
        let started = ContinuousClock.now
        defer {
            let took = ContinuousClock.now - started
            metrics?.logFsync.record(duration: took)
            syncsAreFast.store(took <= slowSync, ordering: .relaxed)
        }
        if syncData(descriptor) != 0 {
            throw StorageError.io("fdatasync of \(segmentPath) failed: \(String(cString: strerror(errno)))")
        }
        unsynced = false
        unsyncedItems = []
        unsyncedStart = nil
    }

    private(set) var segmentPath: String

    /// Syncs and closes the segment file, if open; confined to `queue`.
    private func closeSegment() {
        guard descriptor >= 0 else { return }
        // Records not yet synced are synced first; when that fails the segment stays open, the
        // records are written again, and the segment is closed another time. Otherwise (in
        // `never` mode) the close syncs what it can, as a courtesy.
        if !unsyncedItems.isEmpty {
            do {
                try sync()
            } catch {
                syncFailed(error, remaining: [])
                return
            }
        } else if mode == .never {
            _ = syncData(descriptor)
        }
        close(descriptor)
        descriptor = -1
        budget?.closed(self)
        unsynced = false
    }

    /// Opens (or creates) the current segment for appending; confined to `queue`.
    private func openSegment() throws {
        descriptor = open(segmentPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw StorageError.io("cannot open \(segmentPath): \(String(cString: strerror(errno)))")
        }
        if let victim = budget?.opened(self) { victim.queue.async { victim.closeSegment() } }
        let end = lseek(descriptor, 0, SEEK_END)
        fileLength = end >= 0 ? Int(end) : 0
        StorageLayout.syncDirectory(directory)
    }
}
