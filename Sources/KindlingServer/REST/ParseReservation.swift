import Synchronization

/// What parsing one REST write's body will take (`ParseCost`), held against the server-wide
/// budget of requests in progress from before the parse until the namespace has answered the
/// write. It is given back when the work ends, not when the connection does: the parse and the
/// write go on after a client hangs up.
final class ParseReservation: Sendable {
    private let budget: InFlightBudget
    private let bytes: Atomic<Int>

    private init(budget: InFlightBudget, bytes: Int) {
        self.budget = budget
        self.bytes = Atomic(bytes)
    }

    /// Reserves what parsing a body of `values` values (`JSONValueCount`) will take, while the
    /// body's own `bodyBytes` are held in the same budget. A body that could never be parsed
    /// within the budget is refused as too large (413); one that does not fit now as
    /// unavailable (503, nothing written, retry).
    static func take(values: Int, bodyBytes: Int, from budget: InFlightBudget) -> Result<ParseReservation, RESTError> {
        switch ParseCost.reserve(values: values, textBytes: bodyBytes, from: budget) {
        case .success(let bytes):
            return .success(ParseReservation(budget: budget, bytes: bytes))
        case .failure(let refusal):
            return .failure(RESTError(refusal == .notNow ? .unavailable : .bodyTooLarge, refusal.message))
        }
    }

    /// Gives the reservation back; later calls do nothing.
    func release() {
        budget.release(bytes.exchange(0, ordering: .relaxed))
    }
}
