/// A run-time error in a rule (a method on null, `+` with a boolean, `<` across types, …): it
/// aborts the whole expression, and the rule counts as false.
struct RuleEvaluationError: Error, Sendable {
    var message: String

    init(_ message: String) { self.message = message }
}
