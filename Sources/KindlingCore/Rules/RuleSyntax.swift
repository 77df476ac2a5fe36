/// A parsed rule expression before type checking: the JavaScript subset the rules language
/// allows, each node with its UTF-8 offset in the expression for error messages.
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

    var kind: Kind
    var offset: Int
}
