/// Bytes taken from an `InFlightBudget` for work that ends on another thread (the requests
/// parsed from one loop turn's reads, until their namespace has taken them), given back once
/// by whatever ends the work.
struct BudgetShare: Sendable {
    let budget: InFlightBudget
    let bytes: Int

    func release() { budget.release(bytes) }
}
