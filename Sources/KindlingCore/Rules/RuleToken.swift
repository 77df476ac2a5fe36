/// One token of a rule expression, with its UTF-8 offset in the expression.
struct RuleToken: Sendable {
    enum Kind: Sendable, Equatable {
        case number(Double)
        case string(String)
        case identifier(String)
        /// An operator or punctuation mark, e.g. `===`, `(`, `&&`.
        case symbol(String)
        case end
    }

    var kind: Kind
    var offset: Int

    func isSymbol(_ text: String) -> Bool {
        if case .symbol(let symbol) = kind { return symbol == text }
        return false
    }

    var describe: String {
        switch kind {
        case .number(let value): return "number \(JSNumberFormat.string(value))"
        case .string: return "string"
        case .identifier(let name): return "'\(name)'"
        case .symbol(let symbol): return "'\(symbol)'"
        case .end: return "end of expression"
        }
    }
}
