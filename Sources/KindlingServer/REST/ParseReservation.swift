import Synchronization

/// What parsing one REST write's body will take, held against the server-wide budget of
/// requests in progress from before the parse until the namespace has answered the write.
///
/// Parsing costs far more memory than the body's bytes: a body of many small values takes
/// about 14 times its size as parsed values and tree nodes (55 MB of small objects peaked near
/// 800 MB), so a client whose writes the rules deny could still make the server hold gigabytes
/// by sending a few large bodies at once. The reservation is given back when the work ends, not
/// when the connection does: the parse and the write go on after a client hangs up.
final class ParseReservation: Sendable {
    /// Memory counted for each value a body may hold: a parsed value and its tree node take
    /// about that much (calibrated by the peak resident size of a server parsing 55 MB of small
    /// objects: 6.0 M values counted, 720–800 MB).
    static let bytesPerValue = 128

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
        let room = max(0, budget.limit - max(0, bodyBytes))
        // Compared by division: the product is formed only once it is known to fit.
        guard values <= room / bytesPerValue else {
            let (estimate, overflow) = values.multipliedReportingOverflow(by: bytesPerValue)
            let megabytes = { (bytes: Int) in bytes / (1 << 20) + (bytes % (1 << 20) == 0 ? 0 : 1) }
            return .failure(
                RESTError(
                    .bodyTooLarge,
                    "Parsing this request body would take about \(overflow ? Int.max >> 20 : megabytes(estimate)) MB, more than the server's "
                        + "\(megabytes(budget.limit)) MB for requests in progress (--max-unfinished-mb); send the data in smaller writes"
                ))
        }
        // At most `room`, so no overflow.
        let bytes = values * bytesPerValue
        guard budget.reserve(bytes) else {
            return .failure(RESTError(.unavailable, "The server is holding too many requests in progress; retry later"))
        }
        return .success(ParseReservation(budget: budget, bytes: bytes))
    }

    /// Gives the reservation back; later calls do nothing.
    func release() {
        budget.release(bytes.exchange(0, ordering: .relaxed))
    }
}
