/// A parsed rule expression before type checking: the JavaScript subset the rules language
/// allows, each node with its UTF-8 offset in the expression for error messages and the span of
/// text it was read from (for rules coverage).
struct RuleSyntax: Sendable {
    indirect enum Kind: Sendable {
        case number(Double)
        case string(String)
        case bool(Bool)
        case null
        case regex(pattern: String, flags: String)
        case identifier(String)
        /// `object.name`
        case member(RuleSyntax, String)
        /// `object[index]`
        case computed(RuleSyntax, RuleSyntax)
        case call(RuleSyntax, [RuleSyntax])
        case array([RuleSyntax])
        /// `!x` or `-x`
        case unary(String, RuleSyntax)
        case binary(String, RuleSyntax, RuleSyntax)
        /// A chain of one of `||` or `&&`, two operands or more: `a || b || c` is one node, so
        /// a long flat chain is not a deep tree.
        case logical(String, [RuleSyntax])
        case conditional(RuleSyntax, RuleSyntax, RuleSyntax)
    }

    let kind: Kind
    let offset: Int
    /// The node's text is the expression's UTF-8 bytes `start..<end`: from its first token (or
    /// the parenthesis opening it) to the end of its last one.
    let start: Int
    let end: Int
    /// Levels from this node to its deepest leaf (1 for a leaf): how deep compiling,
    /// evaluating and freeing it recurse.
    let height: Int

    init(kind: Kind, offset: Int, start: Int, end: Int) {
        self.kind = kind
        self.offset = offset
        self.start = start
        self.end = end
        let below: Int
        switch kind {
        case .number, .string, .bool, .null, .regex, .identifier: below = 0
        case .member(let base, _), .unary(_, let base): below = base.height
        case .computed(let base, let index): below = max(base.height, index.height)
        case .call(let callee, let arguments): below = arguments.reduce(callee.height) { max($0, $1.height) }
        case .array(let elements), .logical(_, let elements): below = elements.reduce(0) { max($0, $1.height) }
        case .binary(_, let left, let right): below = max(left.height, right.height)
        case .conditional(let test, let yes, let no): below = max(test.height, yes.height, no.height)
        }
        height = below + 1
    }

    /// The same node read with the parentheses around it, `start..<end`.
    func spanning(from start: Int, to end: Int) -> RuleSyntax {
        RuleSyntax(kind: kind, offset: offset, start: start, end: end)
    }
}
