/// One `.read`, `.write` or `.validate` rule: its compiled expression and its text for traces.
/// A class, so that taking a rule out of its node costs one reference count, not one per field.
final class CompiledRule: Sendable {
    /// The rule as written (`true`, or the expression's text).
    let source: String
    let expression: RuleExpression
    /// Whether the rule reads `data` / `newData`: the walk down the old and new trees to a rule's
    /// level is only done for rules that look there.
    let usesData: Bool
    let usesNewData: Bool

    init(source: String, expression: RuleExpression, usesData: Bool = false, usesNewData: Bool = false) {
        self.source = source
        self.expression = expression
        self.usesData = usesData
        self.usesNewData = usesNewData
    }

    /// `true` or `false` written as a boolean.
    convenience init(_ flag: Bool) {
        self.init(source: flag ? "true" : "false", expression: .constant(.bool(flag)))
    }
}
