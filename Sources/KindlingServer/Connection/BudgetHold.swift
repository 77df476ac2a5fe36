/// Bytes taken from an `InFlightBudget` for work that ends on other threads (the requests parsed
/// in one loop turn, until their namespace has taken them; a block's answers, until every event
/// loop has handed them to its connections), given back when the last holder lets go of it, on
/// whichever path the work ends.
final class BudgetHold: Sendable {
    let budget: InFlightBudget
    let bytes: Int

    /// Holds `bytes` already taken from `budget`.
    init(taken bytes: Int, from budget: InFlightBudget) {
        self.budget = budget
        self.bytes = bytes
    }

    deinit { budget.release(bytes) }
}
