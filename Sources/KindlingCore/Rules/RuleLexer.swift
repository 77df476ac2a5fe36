/// Splits a rule expression into tokens. Regular expression literals depend on where they
/// appear, so the parser asks for one explicitly (`regex(at:)`) when it meets `/` in operand
/// position.
struct RuleLexer {
    let bytes: [UInt8]
    private(set) var index = 0

    init(_ text: String) { bytes = Array(text.utf8) }

    /// Every operator the language has, plus the JavaScript ones it refuses (so that the message
    /// names them rather than a stray character); longest first.
    private static let symbols: [String] = [
        "===", "!==", "**", "==", "!=", "<=", ">=", "&&", "||", "++", "--", "+=", "-=", "*=", "/=", "=>",
        ".", "[", "]", "(", ")", ",", "!", "-", "+", "*", "/", "%", "<", ">", "?", ":", ";", "=", "&", "|",
        "^", "~", "{", "}",
    ]

    private static func isIdentifierStart(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), 0x0B, 0x0C: index += 1
            default: return
            }
        }
    }

    /// The next token.
    mutating func next() throws(RuleCompileError) -> RuleToken {
        skipSpace()
        let start = index
        guard index < bytes.count else { return RuleToken(kind: .end, offset: start) }
        let byte = bytes[index]
        if RuleLexer.isIdentifierStart(byte) {
            while index < bytes.count, RuleLexer.isIdentifierStart(bytes[index]) || RuleLexer.isDigit(bytes[index]) { index += 1 }
            return RuleToken(kind: .identifier(String(decoding: bytes[start..<index], as: UTF8.self)), offset: start)
        }
        if RuleLexer.isDigit(byte) || (byte == UInt8(ascii: ".") && index + 1 < bytes.count && RuleLexer.isDigit(bytes[index + 1])) {
            return RuleToken(kind: .number(try number()), offset: start)
        }
        if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") {
            return RuleToken(kind: .string(try string(quote: byte)), offset: start)
        }
        for symbol in RuleLexer.symbols where matches(symbol) {
            index += symbol.utf8.count
            return RuleToken(kind: .symbol(symbol), offset: start)
        }
        throw RuleCompileError("Unexpected character in the expression", at: start)
    }

    private func matches(_ symbol: String) -> Bool {
        var position = index
        for byte in symbol.utf8 {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
        }
        return true
    }

    private mutating func number() throws(RuleCompileError) -> Double {
        let start = index
        if bytes[index] == UInt8(ascii: "0"), index + 1 < bytes.count, bytes[index + 1] | 0x20 == UInt8(ascii: "x") {
            index += 2
            var value: Double = 0
            var count = 0
            while index < bytes.count, let digit = RuleLexer.hexValue(bytes[index]) {
                value = value * 16 + Double(digit)
                index += 1
                count += 1
            }
            guard count > 0 else { throw RuleCompileError("Invalid hexadecimal number", at: start) }
            return value
        }
        while index < bytes.count, RuleLexer.isDigit(bytes[index]) { index += 1 }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < bytes.count, RuleLexer.isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            var next = index + 1
            if next < bytes.count, bytes[next] == UInt8(ascii: "+") || bytes[next] == UInt8(ascii: "-") { next += 1 }
            if next < bytes.count, RuleLexer.isDigit(bytes[next]) {
                index = next
                while index < bytes.count, RuleLexer.isDigit(bytes[index]) { index += 1 }
            }
        }
        if index < bytes.count, RuleLexer.isIdentifierStart(bytes[index]) || RuleLexer.isDigit(bytes[index]) {
            throw RuleCompileError("Invalid number", at: start)
        }
        guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)) else {
            throw RuleCompileError("Invalid number", at: start)
        }
        return value
    }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    /// A JavaScript string literal in `'…'` or `"…"`.
    private mutating func string(quote: UInt8) throws(RuleCompileError) -> String {
        let start = index
        index += 1
        var text: [UInt8] = []
        while true {
            guard index < bytes.count else { throw RuleCompileError("Unterminated string literal", at: start) }
            let byte = bytes[index]
            index += 1
            if byte == quote { break }
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                throw RuleCompileError("Unterminated string literal", at: start)
            }
            guard byte == UInt8(ascii: "\\") else {
                text.append(byte)
                continue
            }
            guard index < bytes.count else { throw RuleCompileError("Unterminated string literal", at: start) }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "n"): text.append(0x0A)
            case UInt8(ascii: "r"): text.append(0x0D)
            case UInt8(ascii: "t"): text.append(0x09)
            case UInt8(ascii: "b"): text.append(0x08)
            case UInt8(ascii: "f"): text.append(0x0C)
            case UInt8(ascii: "v"): text.append(0x0B)
            case UInt8(ascii: "0"): text.append(0x00)
            case UInt8(ascii: "\n"): break
            case UInt8(ascii: "x"), UInt8(ascii: "u"):
                let count = escape == UInt8(ascii: "x") ? 2 : 4
                guard index + count <= bytes.count else { throw RuleCompileError("Invalid escape in a string", at: index - 2) }
                var value: UInt32 = 0
                for digit in bytes[index..<(index + count)] {
                    guard let digit = RuleLexer.hexValue(digit) else { throw RuleCompileError("Invalid escape in a string", at: index - 2) }
                    value = value << 4 | digit
                }
                index += count
                guard let scalar = Unicode.Scalar(value) else { throw RuleCompileError("Invalid escape in a string", at: index - count - 2) }
                text.append(contentsOf: String(Character(scalar)).utf8)
            default: text.append(escape)
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Reads a regular expression literal starting at the `/` at `offset`: its pattern and flags.
    mutating func regex(at offset: Int) throws(RuleCompileError) -> (pattern: String, flags: String) {
        index = offset + 1
        var inSet = false
        let patternStart = index
        while true {
            guard index < bytes.count, bytes[index] != UInt8(ascii: "\n") else {
                throw RuleCompileError("Unterminated regular expression", at: offset)
            }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\\") {
                index += 2
                continue
            }
            if byte == UInt8(ascii: "[") { inSet = true }
            if byte == UInt8(ascii: "]") { inSet = false }
            if byte == UInt8(ascii: "/"), !inSet { break }
            index += 1
        }
        let pattern = String(decoding: bytes[patternStart..<index], as: UTF8.self)
        index += 1
        let flagsStart = index
        while index < bytes.count, RuleLexer.isIdentifierStart(bytes[index]) || RuleLexer.isDigit(bytes[index]) { index += 1 }
        return (pattern, String(decoding: bytes[flagsStart..<index], as: UTF8.self))
    }
}
