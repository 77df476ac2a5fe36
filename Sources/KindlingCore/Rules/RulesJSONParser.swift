/// Reads the text of a Firebase rules file: JSON plus `//` and `/* */` comments plus raw line
/// breaks inside strings, the superset the Firebase CLI (and targaryen's `firebase-json`) accept.
///
/// It tracks line and column as it goes, so every mistake, and later every rule, can be reported
/// where it is in the file.
struct RulesJSONParser {
    /// Deeper nesting than this is refused (rules trees are a few levels deep; this keeps
    /// recursion bounded for any input).
    static let maxNesting = 128

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var column = 1

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// Parses a whole document: one value, then only whitespace and comments.
    static func parse(_ bytes: [UInt8]) throws(RulesError) -> RulesJSON {
        var parser = RulesJSONParser(bytes: bytes)
        // Editors on Windows may start the file with a byte order mark.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }
        try parser.skipSpace()
        let value = try parser.parseValue(depth: 0)
        try parser.skipSpace()
        if parser.index < bytes.count { throw parser.error("Unexpected text after the end of the document") }
        return value
    }

    private var position: RulesSourcePosition { RulesSourcePosition(line: line, column: column) }

    private func error(_ message: String, at position: RulesSourcePosition? = nil) -> RulesError {
        let place = position ?? self.position
        return RulesError(message: message, rulePath: "", line: place.line, column: place.column)
    }

    /// Moves past one byte, keeping line and column.
    private mutating func advance() {
        let byte = bytes[index]
        index += 1
        if byte == UInt8(ascii: "\n") {
            line += 1
            column = 1
        } else if byte & 0xC0 != 0x80 {
            column += 1
        }
    }

    private mutating func skipSpace() throws(RulesError) {
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                advance()
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "/"):
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { advance() }
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                let start = position
                advance()
                advance()
                while true {
                    guard index < bytes.count else { throw error("Unterminated /* comment", at: start) }
                    if bytes[index] == UInt8(ascii: "*"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "/") {
                        advance()
                        advance()
                        break
                    }
                    advance()
                }
            default:
                return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(RulesError) -> RulesJSON {
        guard depth < RulesJSONParser.maxNesting else { throw error("The document nests deeper than \(RulesJSONParser.maxNesting) levels") }
        guard index < bytes.count else { throw error("Unexpected end of the document: expected a value") }
        let start = position
        switch bytes[index] {
        case UInt8(ascii: "{"): return RulesJSON(kind: .object(try parseObject(depth: depth)), position: start)
        case UInt8(ascii: "["): return RulesJSON(kind: .array(try parseArray(depth: depth)), position: start)
        case UInt8(ascii: "\""):
            let (text, contentStart) = try parseString()
            return RulesJSON(kind: .string(text, contentStart: contentStart), position: start)
        case UInt8(ascii: "t"): try expectWord("true"); return RulesJSON(kind: .bool(true), position: start)
        case UInt8(ascii: "f"): try expectWord("false"); return RulesJSON(kind: .bool(false), position: start)
        case UInt8(ascii: "n"): try expectWord("null"); return RulesJSON(kind: .null, position: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return RulesJSON(kind: .number(try parseNumber()), position: start)
        default:
            throw error("Unexpected character \(describe(bytes[index])): expected a value")
        }
    }

    private func describe(_ byte: UInt8) -> String {
        byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "0x\(String(byte, radix: 16))"
    }

    private mutating func expectWord(_ word: String) throws(RulesError) {
        let start = position
        for expected in word.utf8 {
            guard index < bytes.count, bytes[index] == expected else { throw error("Invalid literal: expected \(word)", at: start) }
            advance()
        }
    }

    private mutating func parseNumber() throws(RulesError) -> Double {
        let start = position
        let from = index
        func digits(_ parser: inout RulesJSONParser) -> Int {
            var count = 0
            while parser.index < parser.bytes.count, parser.bytes[parser.index] >= UInt8(ascii: "0"),
                parser.bytes[parser.index] <= UInt8(ascii: "9")
            {
                parser.advance()
                count += 1
            }
            return count
        }
        if bytes[index] == UInt8(ascii: "-") { advance() }
        guard digits(&self) > 0 else { throw error("Invalid number", at: start) }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            advance()
            guard digits(&self) > 0 else { throw error("Invalid number", at: start) }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            advance()
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { advance() }
            guard digits(&self) > 0 else { throw error("Invalid number", at: start) }
        }
        guard let value = Double(String(decoding: bytes[from..<index], as: UTF8.self)) else {
            throw error("Invalid number", at: start)
        }
        return value
    }

    private mutating func parseArray(depth: Int) throws(RulesError) -> [RulesJSON] {
        advance()
        var elements: [RulesJSON] = []
        try skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            advance()
            return elements
        }
        while true {
            try skipSpace()
            elements.append(try parseValue(depth: depth + 1))
            try skipSpace()
            guard index < bytes.count else { throw error("Unterminated array: expected ',' or ']'") }
            if bytes[index] == UInt8(ascii: ",") {
                advance()
                continue
            }
            guard bytes[index] == UInt8(ascii: "]") else { throw error("Expected ',' or ']' in an array") }
            advance()
            return elements
        }
    }

    private mutating func parseObject(depth: Int) throws(RulesError) -> [RulesJSON.Member] {
        advance()
        var members: [RulesJSON.Member] = []
        try skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            advance()
            return members
        }
        while true {
            try skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error("Expected a quoted key in an object")
            }
            let keyPosition = position
            let (key, _) = try parseString()
            try skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("Expected ':' after the key \"\(key)\"") }
            advance()
            try skipSpace()
            let value = try parseValue(depth: depth + 1)
            members.append(RulesJSON.Member(key: key, keyPosition: keyPosition, value: value))
            try skipSpace()
            guard index < bytes.count else { throw error("Unterminated object: expected ',' or '}'") }
            if bytes[index] == UInt8(ascii: ",") {
                advance()
                continue
            }
            guard bytes[index] == UInt8(ascii: "}") else { throw error("Expected ',' or '}' in an object") }
            advance()
            return members
        }
    }

    /// Reads a string (raw line breaks allowed); returns its text and the byte offset of its
    /// first character.
    private mutating func parseString() throws(RulesError) -> (String, Int) {
        let start = position
        advance()
        let contentStart = index
        var text: [UInt8] = []
        while true {
            guard index < bytes.count else { throw error("Unterminated string", at: start) }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                advance()
                break
            }
            if byte == UInt8(ascii: "\\") {
                let escapeStart = position
                advance()
                guard index < bytes.count else { throw error("Unterminated string", at: start) }
                let before = index
                guard let decoded = RulesJSONParser.decodeEscape(bytes, at: &index) else {
                    throw error("Invalid escape sequence in a string", at: escapeStart)
                }
                column += index - before
                text.append(contentsOf: decoded)
                continue
            }
            text.append(byte)
            advance()
        }
        guard let string = String(validating: text, as: UTF8.self) else { throw error("A string is not valid UTF-8", at: start) }
        return (string, contentStart)
    }

    /// Decodes the escape whose letter is at `index` (just after a backslash), moving `index`
    /// past it; nil for an invalid escape.
    static func decodeEscape(_ bytes: [UInt8], at index: inout Int) -> [UInt8]? {
        let letter = bytes[index]
        index += 1
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return [letter]
        case UInt8(ascii: "b"): return [0x08]
        case UInt8(ascii: "f"): return [0x0C]
        case UInt8(ascii: "n"): return [0x0A]
        case UInt8(ascii: "r"): return [0x0D]
        case UInt8(ascii: "t"): return [0x09]
        case UInt8(ascii: "u"):
            guard var unit = hex4(bytes, at: &index) else { return nil }
            if (0xD800...0xDBFF).contains(unit), index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                bytes[index + 1] == UInt8(ascii: "u")
            {
                var next = index + 2
                if let low = hex4(bytes, at: &next), (0xDC00...0xDFFF).contains(low) {
                    unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    index = next
                }
            }
            guard let scalar = Unicode.Scalar(unit) else { return nil }
            return Array(String(Character(scalar)).utf8)
        default: return nil
        }
    }

    private static func hex4(_ bytes: [UInt8], at index: inout Int) -> UInt32? {
        guard index + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for byte in bytes[index..<(index + 4)] {
            guard let digit = hexDigit(byte) else { return nil }
            value = value << 4 | digit
        }
        index += 4
        return value
    }

    private static func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    /// Where the character at UTF-8 offset `offset` of a string's decoded text is in the document,
    /// given where that string's text starts (its raw byte offset and position).
    static func position(
        in bytes: [UInt8],
        contentStart: Int,
        at start: RulesSourcePosition,
        decodedOffset offset: Int
    ) -> RulesSourcePosition {
        let offset = max(offset, 0)
        return positions(in: bytes, contentStart: contentStart, at: start, count: offset)[offset]
    }

    /// `position` of every decoded offset `0...count` in one pass: the document position of each
    /// UTF-8 offset of a string's decoded text (an offset inside an escape's decoded bytes, or past
    /// the string's end, gets the position after the escape, or the string's end).
    static func positions(in bytes: [UInt8], contentStart: Int, at start: RulesSourcePosition, count: Int) -> [RulesSourcePosition] {
        var table = [start]
        table.reserveCapacity(count + 1)
        var place = start
        var raw = contentStart
        var decoded = 0
        while table.count <= count, raw < bytes.count, bytes[raw] != UInt8(ascii: "\"") {
            let byte = bytes[raw]
            if byte == UInt8(ascii: "\\"), raw + 1 < bytes.count {
                var next = raw + 1
                let length = decodeEscape(bytes, at: &next)?.count ?? 1
                place.column += next - raw
                raw = next
                decoded += length
            } else {
                raw += 1
                decoded += 1
                if byte == UInt8(ascii: "\n") {
                    place.line += 1
                    place.column = 1
                } else if byte & 0xC0 != 0x80 {
                    place.column += 1
                }
            }
            while table.count <= min(decoded, count) { table.append(place) }
        }
        while table.count <= count { table.append(place) }
        return table
    }
}
