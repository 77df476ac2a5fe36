import Testing

@testable import KindlingServer

/// What parsing a text is counted at before it is parsed.
struct ParseCostTests {
    /// Each value, and as much again as the text: a long string is one value, but its parsed
    /// copy is as long as it is.
    @Test func aParseCountsItsValuesAndACopyOfTheText() {
        let budget = InFlightBudget(limit: 1 << 20)
        #expect(ParseCost.reserve(values: 10, textBytes: 100_000, from: budget) == .success(10 * ParseCost.bytesPerValue + 100_000))
        #expect(budget.inUse == 10 * ParseCost.bytesPerValue + 100_000)
    }

    /// A text over half the budget can never be parsed beside itself; below, what does not fit
    /// beside the other requests in progress is refused for now.
    @Test func aTextOverHalfTheBudgetNeverFits() {
        let budget = InFlightBudget(limit: 1 << 20)
        #expect(
            ParseCost.reserve(values: 1, textBytes: 600_000, from: budget)
                == .failure(.neverFits(estimate: 600_128, textBytes: 600_000, limit: 1 << 20)))
        #expect(
            ParseCost.reserve(values: 1, textBytes: Int.max, from: budget)
                == .failure(.neverFits(estimate: Int.max, textBytes: Int.max, limit: 1 << 20)))
        #expect(budget.reserve(600_000))
        #expect(ParseCost.reserve(values: 1, textBytes: 450_000, from: budget) == .failure(.notNow))
        #expect(budget.inUse == 600_000)
    }
}
