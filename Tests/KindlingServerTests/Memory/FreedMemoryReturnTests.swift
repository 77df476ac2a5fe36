@testable import KindlingServer
import Testing

/// When freed memory is given back: only after the resident size grew (by the threshold and by
/// a quarter), never over and over for memory that stays in use. (The trim itself is not run
/// here: it walks the whole test process's heap and would stall every other test.)
struct FreedMemoryReturnTests {
    @Test func theScheduleTrimsOnlyAfterGrowth() {
        var schedule = TrimSchedule(threshold: 64, resident: 100)
        var decisions: [Bool] = []
        for resident in [150, 170] { decisions.append(schedule.shouldTrim(resident: resident)) }
        schedule.trimmed(resident: 160)
        // What stayed in use after the trim is the new mark: no trim again for it. A size that
        // fell by itself lowers the mark.
        for resident in [160, 200, 50, 120] { decisions.append(schedule.shouldTrim(resident: resident)) }
        // A large process trims only after growing by a quarter, not every threshold.
        var large = TrimSchedule(threshold: 64, resident: 4000)
        for resident in [4065, 4999, 5001] { decisions.append(large.shouldTrim(resident: resident)) }
        #expect(decisions == [false, true, false, false, false, true, false, false, true])
    }
}
