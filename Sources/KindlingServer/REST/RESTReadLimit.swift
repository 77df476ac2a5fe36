import KindlingCore

/// `timeout=<n>ms|s|min`: how long a REST read may take on the server, up to 15 minutes. A
/// read that takes longer is answered 400 instead of its data, as a query that ran out of time
/// is on the hosted service.
struct RESTReadLimit: Sendable, Equatable {
    let milliseconds: Int64

    static let maxMilliseconds: Int64 = 15 * 60 * 1000

    /// The limit `text` gives: digits, then `ms`, `s` or `min`, greater than zero and at most
    /// 15 minutes.
    init(_ text: String) throws(RESTError) {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        let multiplier: Int64? =
            switch text.dropFirst(digits.count) {
            case "ms": 1
            case "s": 1000
            case "min": 60_000
            default: nil
            }
        // Up to nine digits, so the product below cannot overflow before the range check.
        guard let multiplier, (1...9).contains(digits.count), let count = Int64(digits),
            count > 0, count * multiplier <= Self.maxMilliseconds
        else {
            throw RESTError(.badRequest, "timeout must be a whole number of ms, s or min (such as 500ms, 10s or 2min), above zero and at most 15min")
        }
        milliseconds = count * multiplier
    }

    /// The refusal of a read that took `elapsed` milliseconds, if that is over the limit.
    func refusal(afterMilliseconds elapsed: Int64) -> RESTError? {
        guard elapsed > milliseconds else { return nil }
        return RESTError(.badRequest, "The read took \(elapsed) ms, longer than its timeout of \(milliseconds) ms")
    }
}
