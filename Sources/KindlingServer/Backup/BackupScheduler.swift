#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import KindlingCore
import Logging
import Synchronization

/// Backs up every namespace holding data on `BackupSchedule`'s timetable, while the server
/// serves: each namespace's tree is captured in one block on its queue (`backupCapture`) and
/// written here, on a queue of its own, so writes never wait for a backup. A failed backup is
/// logged and counted (`BackupMetrics`) and the server goes on; the schedule retries it.
/// Backups run one at a time, scheduled or asked for (`backUpNow`).
final class BackupScheduler: Sendable {
    let configuration: BackupConfiguration
    private let registry: NamespaceRegistry
    private let metrics: BackupMetrics?
    private let logger: Logger
    /// Milliseconds since the Unix epoch: names the files and drives the schedule.
    private let clock: @Sendable () -> Int64
    private let queue = DispatchQueue(label: "kindling.backups", qos: .utility)
    private let schedule: Mutex<BackupSchedule>
    private let retention: BackupRetention
    /// Set by `stop`: no backup starts, and one being written is abandoned at its next chunk.
    private let stopping = Atomic<Bool>(false)
    private let loop = Mutex<Task<Void, Never>?>(nil)
    /// The time the last backup was named by, so names stay distinct within a millisecond.
    private let lastTime = Mutex<Int64>(Int64.min)

    /// Checks the settings and the directory (created when missing, then written to), so a
    /// server that cannot back up refuses to start rather than failing an hour later.
    init(
        configuration: BackupConfiguration, registry: NamespaceRegistry, metrics: BackupMetrics?, logger: Logger,
        clock: @escaping @Sendable () -> Int64 = BackupScheduler.wallClock
    ) throws(BackupError) {
        try configuration.validate()
        try BackupScheduler.checkWritable(configuration.directory)
        let newest = (try? BackupWriter.list(configuration.directory))?.filter { !$0.isTemporary && $0.kind == .data }.map(\.time).max()
        self.configuration = configuration
        self.registry = registry
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        self.retention = BackupRetention(keep: configuration.keep)
        self.schedule = Mutex(BackupSchedule(interval: configuration.intervalMilliseconds, now: clock(), newestBackup: newest))
    }

    /// Milliseconds since the Unix epoch, now.
    static func wallClock() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    /// Creates `directory` when missing and checks a file can be created in it.
    static func checkWritable(_ directory: String) throws(BackupError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            // Foundation's message names no cause; mkdir's errno does (not a directory, read-only…).
            guard mkdir(directory, 0o755) == 0 else { throw .unwritableDirectory(path: directory, reason: String(cString: strerror(errno))) }
        }
        let probe = directory + "/.kindling-backup-probe-\(getpid())"
        let descriptor = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .unwritableDirectory(path: directory, reason: String(cString: strerror(errno))) }
        close(descriptor)
        unlink(probe)
    }

    /// Starts the timetable.
    func start() {
        logger.notice(
            "scheduled backups",
            metadata: ["directory": "\(configuration.directory)", "every": "\(configuration.interval)", "keep": "\(configuration.keep)"])
        let task = Task { [self] in await runSchedule() }
        loop.withLock { $0 = task }
    }

    /// Stops the timetable, abandons a backup being written (its temporary file removed) and
    /// waits until none runs.
    func stop() async {
        stopping.store(true, ordering: .relaxed)
        schedule.withLock { $0.stop() }
        let task = loop.withLock { $0 }
        task?.cancel()
        await task?.value
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in queue.async { done.resume() } }
    }

    private func runSchedule() async {
        while !Task.isCancelled {
            let now = clock()
            switch schedule.withLock({ $0.decide(now: now) }) {
            case .stop:
                return
            case .wait(let due):
                // Decided again at least every minute, so a clock that jumps is noticed.
                let (left, overflow) = due.subtractingReportingOverflow(now)
                try? await Task.sleep(for: .milliseconds(overflow ? 60_000 : min(max(left, 1), 60_000)))
            case .backUp:
                let run = await backUpNow()
                schedule.withLock { $0.finished(now: clock(), succeeded: run.failed.isEmpty) }
            }
        }
    }

    /// Backs every namespace holding data up now (after any backup running), and returns what
    /// it did. `afterCapture` runs on the backup queue between a namespace's capture and its
    /// writing (for tests: a write made then must not be in the backup).
    func backUpNow(afterCapture: (@Sendable (String) -> Void)? = nil) async -> BackupRun {
        await withCheckedContinuation { (done: CheckedContinuation<BackupRun, Never>) in
            queue.async { done.resume(returning: self.backUpAll(afterCapture: afterCapture)) }
        }
    }

    /// `backUpNow` on the backup queue.
    private func backUpAll(afterCapture: (@Sendable (String) -> Void)?) -> BackupRun {
        var run = BackupRun()
        for namespace in registry.existingNamespaces() {
            guard !stopping.load(ordering: .relaxed) else { break }
            let capture = namespace.backupCapture(time: nextTime())
            guard !capture.root.isEmpty else {
                run.skipped.append(capture.namespace)
                continue
            }
            afterCapture?(capture.namespace)
            let started = ContinuousClock.now
            do throws(BackupError) {
                let written = try BackupWriter.write(capture, to: configuration.directory) { self.stopping.load(ordering: .relaxed) }
                metrics?.succeeded(bytes: written.bytes, at: capture.time)
                run.written[capture.namespace] = written.dataPath
                logger.info(
                    "wrote backup",
                    metadata: [
                        "namespace": "\(capture.namespace)", "file": "\(written.dataPath)", "bytes": "\(written.bytes)",
                        "json-bytes": "\(written.jsonBytes)", "duration": "\(ContinuousClock.now - started)",
                    ])
                prune(capture.namespace)
            } catch .stopped {
                break
            } catch {
                metrics?.failure()
                run.failed[capture.namespace] = error.description
                logger.error("backup failed; the server goes on serving", metadata: ["namespace": "\(capture.namespace)", "error": "\(error)"])
            }
        }
        return run
    }

    /// Deletes the namespace's backups beyond `--backup-keep` and files left by a backup a
    /// process died writing. A failure is logged: the backup itself was written.
    private func prune(_ namespace: String) {
        do throws(BackupError) {
            let names = try BackupWriter.list(configuration.directory)
            try BackupWriter.delete(retention.deletions(among: names, namespace: namespace), in: configuration.directory)
        } catch {
            logger.warning("could not delete old backups", metadata: ["namespace": "\(namespace)", "error": "\(error)"])
        }
    }

    /// The clock's time, or one millisecond past the last name's when the clock has not moved
    /// on (or went back), so no backup replaces another.
    private func nextTime() -> Int64 {
        lastTime.withLock { last in
            last = max(clock(), BackupSchedule.adding(last, 1))
            return last
        }
    }
}
