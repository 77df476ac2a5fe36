/// One expression of a rules document that rules coverage counts: a whole rule, or any of its
/// sub-expressions (an operand, a method call, the snapshot it is called on, a literal argument).
///
/// Sites are numbered when the document loads for coverage (`RulesDocument.parse(_:coverage:)`),
/// the parts of an expression before the expression itself; `parent` links each part to the
/// expression it belongs to, so the sites form one tree per rule.
public struct RuleCoverageSite: Sendable, Equatable {
    /// The rule it belongs to, named as rules errors name it: `rules/users/$uid/.write`.
    public let rule: String
    /// The expression's text as the rule holds it (JSON escapes decoded).
    public let text: String
    /// Where its first character is in the document.
    public let start: RulesSourcePosition
    /// Where the character after its last one is in the document.
    public let end: RulesSourcePosition
    /// The site of the expression it is a part of; nil for a whole rule.
    public internal(set) var parent: Int?
    /// True when the expression is typed boolean, so it has two outcomes to cover.
    public let isBoolean: Bool

    public init(rule: String, text: String, start: RulesSourcePosition, end: RulesSourcePosition, parent: Int?, isBoolean: Bool) {
        self.rule = rule
        self.text = text
        self.start = start
        self.end = end
        self.parent = parent
        self.isBoolean = isBoolean
    }
}
