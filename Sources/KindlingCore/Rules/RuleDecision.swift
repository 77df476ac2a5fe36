/// The answer to "may this read or write happen?", with the reasoning when it was asked for.
///
/// A denial is not an error: it is an ordinary answer that the server maps to
/// `permission_denied` (or HTTP 401) in one place.
public struct RuleDecision: Sendable, Equatable {
    /// True when the operation may go ahead.
    public let allowed: Bool
    /// Only filled when `explain` was true: one line per evaluated rule, in order,
    /// `/<path>: .write "<source>" => true` (or `=> error: <message>`), then a last line saying
    /// why the operation was allowed or denied.
    public let trace: [String]

    public init(allowed: Bool, trace: [String] = []) {
        self.allowed = allowed
        self.trace = trace
    }
}
