import Testing

@testable import KindlingServer

/// When the log's next flush starts: at once without load, held back for company right after a
/// sync under load, and never longer than its linger.
struct GroupCommitPacerTests {
    /// Drives a pacer the way the log does.
    final class Driver {
        var pacer: GroupCommitPacer
        let synced = ContinuousClock.now

        init(waits: Bool = true) { pacer = GroupCommitPacer(waits: waits) }

        /// A pacer whose last two batches held `batches` records, the last synced at `synced`
        /// after a sync of `sync`.
        convenience init(batches: [Int], sync: Duration = .milliseconds(1), waits: Bool = true) {
            self.init(waits: waits)
            for batch in batches {
                let scheduled = pacer.queued(count: batch)
                let start = pacer.starting(count: batch, at: synced - .seconds(1))
                #expect(scheduled == .flushNow && start == .take)
                pacer.taken(count: batch)
            }
            pacer.synced(at: synced, taking: sync)
        }

        func queued(_ count: Int) -> GroupCommitPacer.Decision { pacer.queued(count: count) }
        func starting(_ count: Int, after elapsed: Duration = .zero) -> GroupCommitPacer.Start {
            pacer.starting(count: count, at: synced + elapsed)
        }
        func due(_ wait: UInt64) -> Bool { pacer.due(wait) }
        func taken(_ count: Int) { pacer.taken(count: count) }
        var state: GroupCommitPacer.State { pacer.state }
    }

    @Test func withoutLoadAFlushStartsAtOnceAndIsScheduledOnlyOnce() {
        let log = Driver()
        #expect(log.queued(1) == .flushNow)
        #expect(log.queued(2) == .none)
        #expect(log.state == .scheduled)
        #expect(log.starting(2) == .take)
        log.taken(2)
        #expect(log.state == .idle)
        #expect(log.queued(1) == .flushNow)
    }

    @Test func rightAfterALoadedSyncAFlushWaitsUntilAsManyRecordsHaveCome() {
        // Two groups taking turns, 125 and 131: the 125 queued when the 131's sync ends wait
        // for the 131 to come back, and the two go in one batch.
        let log = Driver(batches: [125, 131])
        #expect(log.queued(125) == .flushNow)
        guard case .wait(let wait, let number) = log.starting(125, after: .microseconds(50)) else {
            Issue.record("no wait 50 µs after a loaded sync")
            return
        }
        // The last sync took 1 ms: the linger is the longest allowed, counted from its end.
        #expect(wait == GroupCommitPacer.longestLinger - .microseconds(50))
        #expect(log.state == .waiting(target: 131))
        #expect(log.queued(130) == .none)
        #expect(log.queued(256) == .flushNow)
        #expect(log.state == .scheduled)
        // The wait's timer, firing after the flush was scheduled or ran, does nothing more.
        #expect(!log.due(number))
        #expect(log.starting(256, after: .microseconds(120)) == .take)
        log.taken(256)
        #expect(!log.due(number))
        #expect(log.state == .idle)
    }

    @Test func aWaitThatDoesNotFillEndsWithItsTimer() {
        let log = Driver(batches: [50, 50], sync: .microseconds(30))
        #expect(log.queued(1) == .flushNow)
        guard case .wait(let wait, let number) = log.starting(1) else {
            Issue.record("no wait right after a loaded sync")
            return
        }
        // A sync faster than the shortest linger still lingers that long, for the round trip.
        #expect(wait == GroupCommitPacer.shortestLinger)
        #expect(log.queued(2) == .none)
        #expect(log.due(number))
        #expect(log.state == .scheduled)
        #expect(log.queued(3) == .none)
        #expect(!log.due(number))
        // The linger is over: the flush takes what came.
        #expect(log.starting(3, after: GroupCommitPacer.shortestLinger) == .take)
    }

    @Test func theLingerIsTheLastSyncsTimeWithinItsBounds() {
        for (sync, expected) in [
            (Duration.microseconds(10), GroupCommitPacer.shortestLinger), (.microseconds(300), .microseconds(300)),
            (.milliseconds(20), GroupCommitPacer.longestLinger),
        ] {
            let log = Driver(batches: [10], sync: sync)
            #expect(log.pacer.linger == expected)
            #expect(log.queued(1) == .flushNow)
            #expect(log.starting(1) == .wait(expected, wait: 1))
        }
    }

    @Test func noWaitWithoutASignOfLoad() {
        // Small batches.
        let small = Driver(batches: [GroupCommitPacer.loadedBatch - 1, 3])
        #expect(small.starting(1) == .take)
        // The last sync ended a linger ago or more: the load has paused.
        let paused = Driver(batches: [100, 100])
        #expect(paused.starting(1, after: GroupCommitPacer.longestLinger) == .take)
        // Records that gathered during the sync already fill a batch as large as the larger of
        // the last two.
        let gathered = Driver(batches: [40, 10])
        #expect(gathered.starting(39) == .wait(GroupCommitPacer.longestLinger, wait: 1))
        let full = Driver(batches: [40, 10])
        #expect(full.starting(40) == .take)
        // everysec and never acknowledge before any sync: nothing to wait for.
        #expect(Driver(batches: [100, 100], waits: false).starting(1) == .take)
        // Nothing synced yet.
        #expect(Driver().starting(1) == .take)
    }

    @Test func anEmptyFlushKeepsTheLastBatchesSizes() {
        let log = Driver(batches: [30, 30])
        // A flush that found the queue already taken (a timer after a drain) takes nothing.
        log.taken(0)
        guard case .wait = log.starting(1) else {
            Issue.record("the empty flush made the last batches look small")
            return
        }
    }
}
