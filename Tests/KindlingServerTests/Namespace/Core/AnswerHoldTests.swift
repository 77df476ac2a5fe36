import Testing

@testable import KindlingServer

/// One answer held against the budget of requests in progress.
struct AnswerHoldTests {
    @Test func anAnswerIsHeldUntilLetGoRefusedWhenFullAndUnheldWhenItNeverFits() {
        let budget = InFlightBudget(limit: 1000)
        var first: AnswerHold? = budget.hold(answer: 600)
        guard case .held? = first else {
            Issue.record("600 of 1000 bytes were not held")
            return
        }
        #expect(budget.inUse == 600)
        #expect(first?.taken?.bytes == 600)
        let refused = budget.hold(answer: 500)
        #expect(refused.taken == nil)
        guard case .refused = refused else {
            Issue.record("500 more bytes were not refused")
            return
        }
        guard case .unheld = budget.hold(answer: 1001) else {
            Issue.record("an answer larger than the budget was not sent unheld")
            return
        }
        #expect(budget.inUse == 600)
        first = nil
        #expect(budget.inUse == 0)
    }
}
