/// One `.read`, `.write` or `.validate` rule: its compiled expression and its text for traces.
struct CompiledRule: Sendable {
    /// The rule as written (`true`, or the expression's text).
    let source: String
    let expression: RuleExpression
}
