import Dispatch
import Foundation
import Testing

@testable import KindlingServer

/// The shutdown's last step goes on at its deadline when the drain takes longer.
struct DrainDeadlineTests {
    @Test func workThatEndsInTimeIsReportedDone() async {
        #expect(await DrainDeadline.run(within: .seconds(5)) {})
    }

    /// The work cannot end before the call returns (it waits for a gate opened only after), so
    /// returning at all proves the deadline, not the work, ended the wait; no wall-clock bound
    /// that a loaded machine could break.
    @Test func workPastTheDeadlineIsLeftBehind() async {
        let gate = DispatchSemaphore(value: 0)
        let done = await DrainDeadline.run(within: .milliseconds(100)) { gate.wait() }
        gate.signal()
        #expect(!done)
    }
}
