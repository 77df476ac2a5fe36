import Dispatch
import Foundation
import KindlingCore
import Logging
import KindlingTesting
import Synchronization
import Testing

@testable import KindlingServer

/// `WriteAheadLog.append(encoded:through:flushingHere:)`: an idle log leaves the flush to the
/// caller, nothing is durable before that flush has synced, appends meanwhile join it, and a
/// slow or failing disk takes the flush back onto the log's own thread.
@Suite struct FlushHereTests {
    let logger: Logger = {
        var logger = Logger(label: "flush-here-test")
        logger.logLevel = .critical
        return logger
    }()

    /// A log on a fresh directory whose syncs and durable reports are recorded in one
    /// sequence, in the order they happen; `syncData` runs before each real sync.
    final class Recorder: Sendable {
        let events = Mutex<[String]>([])
        let directory = NSTemporaryDirectory() + "kindling-flush-here-\(UUID().uuidString)"

        func log(logger: Logger, slowSync: Duration = .seconds(60), syncData: @escaping @Sendable () -> Int32 = { 0 }) throws -> WriteAheadLog {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            return WriteAheadLog(
                directory: directory, mode: .always, startSequence: 1, logger: logger,
                syncData: { descriptor in
                    let injected = syncData()
                    self.events.withLock { $0.append("sync") }
                    return injected == 0 ? fdatasync(descriptor) : injected
                },
                slowSync: slowSync,
                onDurable: { sequence in self.events.withLock { $0.append("durable \(sequence)") } })
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }

    static func encoded(_ sequence: UInt64) throws -> [UInt8] {
        LogRecord(sequence: sequence, write: .set(try Path("a/\(sequence)"), Node(.number(Double(sequence))))).encoded()
    }

    @Test func anIdleLogLeavesTheFlushToTheCallerAndReportsOnlyAfterItsSync() throws {
        let recorder = Recorder()
        defer { recorder.remove() }
        let log = try recorder.log(logger: logger)
        #expect(log.append(encoded: try Self.encoded(1), through: 1, flushingHere: true))
        // Owed, so nobody else flushes: a second append joins the flush the caller owes.
        #expect(!log.append(encoded: try Self.encoded(2), through: 2, flushingHere: true))
        #expect(recorder.events.withLock { $0 }.isEmpty)
        // Synced here; what waited is released when the caller runs the report, later.
        let report = try #require(log.flushHere())
        #expect(recorder.events.withLock { $0 } == ["sync"])
        report()
        #expect(recorder.events.withLock { $0 } == ["sync", "durable 2"])
        // Flushed, the log is idle again: the next append is the caller's to flush once more.
        #expect(log.append(encoded: try Self.encoded(3), through: 3, flushingHere: true))
        log.flushHere()?()
        #expect(recorder.events.withLock { $0 } == ["sync", "durable 2", "sync", "durable 3"])
    }

    @Test func withoutFlushingHereTheLogFlushesOnItsOwnThread() async throws {
        let recorder = Recorder()
        defer { recorder.remove() }
        let log = try recorder.log(logger: logger)
        #expect(!log.append(encoded: try Self.encoded(1), through: 1, flushingHere: false))
        try await eventually(within: .seconds(10)) { recorder.events.withLock { $0 } == ["sync", "durable 1"] }
    }

    /// After a sync slower than `slowSync` (here every sync is) the log flushes on its own
    /// thread, so a slow disk does not hold an event loop.
    @Test func afterASlowSyncTheLogFlushesOnItsOwnThread() async throws {
        let recorder = Recorder()
        defer { recorder.remove() }
        let log = try recorder.log(logger: logger, slowSync: .zero)
        #expect(log.append(encoded: try Self.encoded(1), through: 1, flushingHere: true))
        log.flushHere()?()
        #expect(!log.append(encoded: try Self.encoded(2), through: 2, flushingHere: true))
        try await eventually(within: .seconds(10)) { recorder.events.withLock { $0 } == ["sync", "durable 1", "sync", "durable 2"] }
    }

    /// While the log's thread is flushing, an append joins the next flush on that thread: the
    /// caller would otherwise wait for the running flush before its own.
    @Test func anAppendDuringARunningFlushIsNotHandedToTheCaller() async throws {
        let recorder = Recorder()
        defer { recorder.remove() }
        let syncing = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let first = Atomic<Bool>(true)
        let log = try recorder.log(logger: logger) {
            if first.exchange(false, ordering: .relaxed) {
                syncing.signal()
                proceed.wait()
            }
            return 0
        }
        #expect(!log.append(encoded: try Self.encoded(1), through: 1, flushingHere: false))
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                syncing.wait()
                continuation.resume()
            }
        }
        #expect(!log.append(encoded: try Self.encoded(2), through: 2, flushingHere: true))
        proceed.signal()
        try await eventually(within: .seconds(10)) { recorder.events.withLock { $0.last } == "durable 2" }
    }

    /// Only `always` mode syncs on the caller: in `everysec` the log's timer syncs a second's
    /// writes, which no event loop should wait for.
    @Test func onlyAlwaysModeHandsTheFlushToTheCaller() async throws {
        let recorder = Recorder()
        defer { recorder.remove() }
        try FileManager.default.createDirectory(atPath: recorder.directory, withIntermediateDirectories: true)
        let log = WriteAheadLog(
            directory: recorder.directory, mode: .everysec, startSequence: 1, logger: logger,
            onDurable: { sequence in recorder.events.withLock { $0.append("durable \(sequence)") } })
        #expect(!log.append(encoded: try Self.encoded(1), through: 1, flushingHere: true))
        try await eventually(within: .seconds(10)) { recorder.events.withLock { $0 } == ["durable 1"] }
    }

    /// While the log is failing, its own thread retries, and a caller is never handed the flush.
    @Test func aFailingLogNeverHandsTheFlushToTheCaller() async throws {
        let recorder = Recorder()
        defer { recorder.remove() }
        let failures = Atomic<Int>(1)
        let log = try recorder.log(logger: logger) {
            failures.subtract(1, ordering: .relaxed).oldValue > 0 ? -1 : 0
        }
        #expect(log.append(encoded: try Self.encoded(1), through: 1, flushingHere: true))
        // Nothing was made durable, so there is nothing to report.
        #expect(log.flushHere() == nil)
        #expect(!log.isHealthy)
        #expect(recorder.events.withLock { $0 } == ["sync"])
        #expect(!log.append(encoded: try Self.encoded(2), through: 2, flushingHere: true))
        // Record 1 is written again with 2 and synced before either is reported.
        try await eventually(within: .seconds(10)) { log.isHealthy && recorder.events.withLock { $0 } == ["sync", "sync", "durable 2"] }
    }
}
