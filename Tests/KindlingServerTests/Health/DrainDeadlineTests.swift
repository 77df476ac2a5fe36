import Foundation
import Testing

@testable import KindlingServer

/// The shutdown's last step goes on at its deadline when the drain takes longer.
struct DrainDeadlineTests {
    @Test func workThatEndsInTimeIsReportedDone() async {
        #expect(await DrainDeadline.run(within: .seconds(5)) {})
    }

    @Test func workPastTheDeadlineIsLeftBehind() async {
        let started = ContinuousClock.now
        let done = await DrainDeadline.run(within: .milliseconds(100)) { Thread.sleep(forTimeInterval: 5) }
        #expect(!done)
        #expect(ContinuousClock.now - started < .seconds(4))
    }
}
