/// Parses one rule expression with JavaScript's precedence (§4.2 of the rules spec), refusing
/// every construct the rules language leaves out (assignment, `**`, statements, …).
struct RuleParser {
    /// Deeper nesting is refused, so that no expression can exhaust the stack: compiling,
    /// evaluating and freeing a syntax tree recurse once per level (evaluating twice in a
    /// document loaded for rules coverage, whose probe wraps each level). Parentheses, `?:`, unary
    /// operators and every link of a chain (`a + b + c`, `a.b.c`, `f()()`) each count as a level,
    /// since each makes the tree one level deeper; a chain of `||` or of `&&` is one node
    /// however long, so it counts once.
    static let maxNesting = 500

    private var lexer: RuleLexer
    private var token: RuleToken
    private var depth = 0
    /// Where the last token taken ends (a UTF-8 offset): the end of the node made from it.
    private var consumedEnd = 0

    private init(_ text: String) throws(RuleCompileError) {
        lexer = RuleLexer(text)
        token = try lexer.next()
    }

    /// Parses `text` as a single expression (one trailing `;` is tolerated, as esprima does).
    static func parse(_ text: String) throws(RuleCompileError) -> RuleSyntax {
        var parser = try RuleParser(text)
        guard case .end = parser.token.kind else {
            let expression = try parser.expression()
            if parser.token.isSymbol(";") {
                try parser.advance()
                if case .end = parser.token.kind { return expression }
                throw RuleCompileError("Rule is not a single expression.", at: parser.token.offset)
            }
            guard case .end = parser.token.kind else {
                throw RuleCompileError("Unexpected \(parser.token.describe)", at: parser.token.offset)
            }
            return expression
        }
        throw RuleCompileError("The rule is empty", at: 0)
    }

    private mutating func advance() throws(RuleCompileError) {
        consumedEnd = lexer.index
        token = try lexer.next()
    }

    /// A syntax node, refused once the tree under it is deeper than `maxNesting`. The parser's
    /// own depth counts only what is open while it reads; a chain attached to a parenthesised
    /// chain (`((a + b) + c) + d`) makes a tree deeper than any point of the reading, so the
    /// tree's height is checked as it is built, before a deeper one can exist.
    private func node(_ kind: RuleSyntax.Kind, offset: Int) throws(RuleCompileError) -> RuleSyntax {
        try node(kind, offset: offset, start: offset)
    }

    /// A node that starts where its first operand does (a binary operator, a member, a call).
    private func node(_ kind: RuleSyntax.Kind, from first: RuleSyntax) throws(RuleCompileError) -> RuleSyntax {
        try node(kind, offset: first.offset, start: first.start)
    }

    /// A node spanning `start` to the end of the last token taken.
    private func node(_ kind: RuleSyntax.Kind, offset: Int, start: Int) throws(RuleCompileError) -> RuleSyntax {
        let node = RuleSyntax(kind: kind, offset: offset, start: start, end: consumedEnd)
        guard node.height <= RuleParser.maxNesting else { throw RuleCompileError("The expression nests too deeply", at: offset) }
        return node
    }

    private mutating func expect(_ symbol: String) throws(RuleCompileError) {
        guard token.isSymbol(symbol) else { throw RuleCompileError("Expected '\(symbol)' but found \(token.describe)", at: token.offset) }
        try advance()
    }

    private mutating func nested<T>(_ body: (inout RuleParser) throws(RuleCompileError) -> T) throws(RuleCompileError) -> T {
        try deepen()
        defer { depth -= 1 }
        return try body(&self)
    }

    /// One level deeper; the caller gives it back.
    private mutating func deepen() throws(RuleCompileError) {
        depth += 1
        guard depth <= RuleParser.maxNesting else { throw RuleCompileError("The expression nests too deeply", at: token.offset) }
    }

    private mutating func expression() throws(RuleCompileError) -> RuleSyntax {
        try nested { (parser: inout RuleParser) throws(RuleCompileError) in try parser.conditional() }
    }

    private mutating func conditional() throws(RuleCompileError) -> RuleSyntax {
        let test = try logical(level: 0)
        guard token.isSymbol("?") else { return test }
        try advance()
        let yes = try expression()
        try expect(":")
        let no = try expression()
        return try node(.conditional(test, yes, no), from: test)
    }

    /// Binary levels, loosest first.
    private static let levels: [[String]] = [
        ["||"], ["&&"], ["==", "!=", "===", "!=="], ["<", "<=", ">", ">="], ["+", "-"], ["*", "/", "%"],
    ]

    private mutating func logical(level: Int) throws(RuleCompileError) -> RuleSyntax {
        guard level < RuleParser.levels.count else { return try unary() }
        if level < 2 { return try chain(level: level) }
        var left = try logical(level: level + 1)
        let outer = depth
        defer { depth = outer }
        while case .symbol(let symbol) = token.kind, RuleParser.levels[level].contains(symbol) {
            try deepen()
            try advance()
            let right = try logical(level: level + 1)
            left = try node(.binary(symbol, left, right), from: left)
        }
        return left
    }

    /// A chain of `||` (level 0) or `&&` (level 1): its operands side by side, one level deep.
    private mutating func chain(level: Int) throws(RuleCompileError) -> RuleSyntax {
        let symbol = RuleParser.levels[level][0]
        let first = try logical(level: level + 1)
        guard token.isSymbol(symbol) else { return first }
        try deepen()
        defer { depth -= 1 }
        var operands = [first]
        while token.isSymbol(symbol) {
            try advance()
            operands.append(try logical(level: level + 1))
        }
        return try node(.logical(symbol, operands), from: first)
    }

    private mutating func unary() throws(RuleCompileError) -> RuleSyntax {
        if case .symbol(let symbol) = token.kind, symbol == "!" || symbol == "-" {
            let offset = token.offset
            try advance()
            let operand = try nested { (parser: inout RuleParser) throws(RuleCompileError) in try parser.unary() }
            return try node(.unary(symbol, operand), offset: offset)
        }
        if case .symbol(let symbol) = token.kind, ["+", "++", "--", "~"].contains(symbol) {
            throw RuleCompileError("Unsupported operator '\(symbol)'", at: token.offset)
        }
        return try postfix()
    }

    private mutating func postfix() throws(RuleCompileError) -> RuleSyntax {
        var value = try primary()
        let outer = depth
        defer { depth = outer }
        while true {
            if token.isSymbol(".") || token.isSymbol("[") || token.isSymbol("(") { try deepen() }
            if token.isSymbol(".") {
                try advance()
                guard case .identifier(let name) = token.kind else {
                    throw RuleCompileError("Expected a property name after '.'", at: token.offset)
                }
                try advance()
                value = try node(.member(value, name), from: value)
            } else if token.isSymbol("[") {
                try advance()
                let index = try expression()
                try expect("]")
                value = try node(.computed(value, index), from: value)
            } else if token.isSymbol("(") {
                try advance()
                let arguments = try list(closing: ")")
                value = try node(.call(value, arguments), from: value)
            } else {
                return value
            }
        }
    }

    private mutating func list(closing: String) throws(RuleCompileError) -> [RuleSyntax] {
        var elements: [RuleSyntax] = []
        if token.isSymbol(closing) {
            try advance()
            return elements
        }
        while true {
            elements.append(try expression())
            if token.isSymbol(",") {
                try advance()
                continue
            }
            try expect(closing)
            return elements
        }
    }

    private static let reserved: Set<String> = [
        "var", "let", "const", "function", "new", "this", "typeof", "instanceof", "in", "void", "delete", "return",
        "if", "else", "for", "while", "do", "class", "undefined",
    ]

    private mutating func primary() throws(RuleCompileError) -> RuleSyntax {
        let start = token
        switch token.kind {
        case .number(let value):
            try advance()
            return try node(.number(value), offset: start.offset)
        case .string(let text):
            try advance()
            return try node(.string(text), offset: start.offset)
        case .identifier(let name):
            try advance()
            switch name {
            case "true": return try node(.bool(true), offset: start.offset)
            case "false": return try node(.bool(false), offset: start.offset)
            case "null": return try node(.null, offset: start.offset)
            default:
                if RuleParser.reserved.contains(name) {
                    throw RuleCompileError("Unsupported keyword '\(name)'", at: start.offset)
                }
                return try node(.identifier(name), offset: start.offset)
            }
        case .symbol("("):
            try advance()
            let inner = try expression()
            try expect(")")
            return inner.spanning(from: start.offset, to: consumedEnd)
        case .symbol("["):
            try advance()
            let elements = try list(closing: "]")
            return try node(.array(elements), offset: start.offset)
        case .symbol("/"), .symbol("/="):
            let (pattern, flags) = try lexer.regex(at: start.offset)
            try advance()
            return try node(.regex(pattern: pattern, flags: flags), offset: start.offset)
        case .end:
            throw RuleCompileError("Unexpected end of expression", at: start.offset)
        case .symbol:
            throw RuleCompileError("Unexpected \(start.describe)", at: start.offset)
        }
    }
}
