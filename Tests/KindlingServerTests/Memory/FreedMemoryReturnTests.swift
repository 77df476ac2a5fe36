@testable import KindlingServer
import Testing

/// When freed memory is given back: only after the resident size grew (by the threshold and by
/// a quarter), never over and over for memory that stays in use. (The trim itself is not run
/// here: it walks the whole test process's heap and would stall every other test.)
struct FreedMemoryReturnTests {
    @Test func theScheduleTrimsAfterGrowth() {
        let start = ContinuousClock.now
        var schedule = TrimSchedule(threshold: 64, resident: 100, now: start)
        var decisions: [Bool] = []
        for resident in [150, 170] { decisions.append(schedule.shouldTrim(resident: resident, now: start)) }
        schedule.trimmed(before: 170, after: 160, now: start)
        // What stayed in use after the trim is the new mark: no trim again for it. A size that
        // fell by itself lowers the mark.
        for resident in [160, 200, 50, 120] { decisions.append(schedule.shouldTrim(resident: resident, now: start)) }
        // A large process trims only after growing by a quarter, not every threshold.
        var large = TrimSchedule(threshold: 64, resident: 4000, now: start)
        for resident in [4065, 4999, 5001] { decisions.append(large.shouldTrim(resident: resident, now: start)) }
        #expect(decisions == [false, true, false, false, false, true, false, false, true])
    }

    /// Memory freed after a trim leaves the resident size where it was: a process over the
    /// threshold is trimmed again after a wait, which doubles while trims find little to return
    /// and starts over after one that returned much. A small process is left alone.
    @Test func aLargeProcessIsTrimmedAgainAfterAWaitThatGrowsWhileTrimsFindLittle() {
        let start = ContinuousClock.now
        var schedule = TrimSchedule(threshold: 64, resident: 1000, now: start)
        var decisions: [Bool] = []
        for (resident, seconds) in [(1000, 59), (1000, 60)] {
            decisions.append(schedule.shouldTrim(resident: resident, now: start + .seconds(seconds)))
        }
        schedule.trimmed(before: 1000, after: 990, now: start + .seconds(60))
        #expect(schedule.wait == .seconds(120))
        for (resident, seconds) in [(990, 179), (990, 180)] {
            decisions.append(schedule.shouldTrim(resident: resident, now: start + .seconds(seconds)))
        }
        #expect(decisions == [false, true, false, true])
        for _ in 0..<10 { schedule.trimmed(before: 990, after: 990, now: start + .seconds(180)) }
        #expect(schedule.wait == TrimSchedule.longestWait)
        schedule.trimmed(before: 990, after: 300, now: start + .seconds(200))
        #expect(schedule.wait == TrimSchedule.firstWait)
        var small = TrimSchedule(threshold: 64, resident: 50, now: start)
        let smallTrims = small.shouldTrim(resident: 60, now: start + .seconds(3600))
        #expect(!smallTrims)
    }
}
