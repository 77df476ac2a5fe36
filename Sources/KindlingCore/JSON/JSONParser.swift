/// A strict RFC 8259 JSON parser over UTF-8 bytes.
///
/// Numbers are parsed with correct rounding, so every double that a client wrote comes back
/// bit for bit. Strings must be valid UTF-8. A lone surrogate in a `\u` escape (JavaScript's
/// `JSON.stringify` writes one for a string cut through an emoji) becomes U+FFFD, as a browser's
/// WebSocket turns one in text: refusing it would refuse the client's whole message, and an SDK
/// sends the same write again at every reconnect. Nesting is capped so hostile input cannot
/// exhaust the stack.
public struct JSONParser {
    /// The deepest nesting accepted; far above the tree's own 32 levels plus a message envelope.
    public static let maxNesting = 128

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Parses one JSON text (surrounding whitespace allowed).
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(ValidationError) -> JSONValue {
        var parser = JSONParser(bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        if parser.index != bytes.count { throw parser.failure("unexpected text after the value") }
        return value
    }

    /// Parses the one JSON value that starts at `start` and returns it with the index just past
    /// it, for a reader that matched the text around it itself (a message envelope). `depth` is
    /// the nesting already around the value, so the nesting cap is the whole text's.
    public static func parseValue(
        _ bytes: UnsafeBufferPointer<UInt8>, at start: Int, depth: Int
    ) throws(ValidationError) -> (value: JSONValue, end: Int) {
        var parser = JSONParser(bytes)
        parser.index = start
        parser.depth = depth
        let value = try parser.parseValue()
        return (value, parser.index)
    }

    /// Why `token` failed: the byte of its input where, and the parser's reason.
    struct TokenFailure: Error {
        let index: Int
        let reason: String
    }

    /// Decodes the one value that is the whole of `bytes` (a string, number or literal whose
    /// ends `JSONStreamReader` has found), so a streamed text is decoded exactly as a whole one.
    static func token(_ bytes: UnsafeBufferPointer<UInt8>) throws(TokenFailure) -> JSONValue {
        var parser = JSONParser(bytes)
        do throws(ValidationError) {
            let value = try parser.parseValue()
            if parser.index != bytes.count { throw parser.failure("unexpected text after the value") }
            return value
        } catch {
            let prefix = "Invalid JSON at byte \(parser.index): "
            let reason = error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message
            throw TokenFailure(index: parser.index, reason: reason)
        }
    }

    /// Parses one JSON text from a byte array.
    public static func parse(_ bytes: [UInt8]) throws(ValidationError) -> JSONValue {
        let result: Result<JSONValue, ValidationError> = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(ValidationError) in try parse(buffer) }
        }
        return try result.get()
    }

    /// Parses one JSON text from a string.
    public static func parse(_ text: String) throws(ValidationError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    private func failure(_ reason: String) -> ValidationError {
        ValidationError(.invalidJSON, "Invalid JSON at byte \(index): \(reason)")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(ValidationError) -> JSONValue {
        guard index < bytes.count else { throw failure("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw failure("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(ValidationError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw failure("unexpected end of input") }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] {
            throw failure("unexpected character")
        }
        index += count
    }

    private mutating func enter() throws(ValidationError) {
        depth += 1
        if depth > JSONParser.maxNesting { throw failure("nested deeper than \(JSONParser.maxNesting) levels") }
    }

    private mutating func parseObject() throws(ValidationError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var members: [JSONMember] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        // Room for a request envelope's members up front, rather than growing 1, 2, 4.
        members.reserveCapacity(4)
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            skipWhitespace()
            members.append(JSONMember(key, try parseValue()))
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of input") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(members)
            default: throw failure("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray() throws(ValidationError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of input") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(elements)
            default: throw failure("expected ',' or ']'")
            }
        }
    }

    private mutating func parseString() throws(ValidationError) -> String {
        index += 1
        let start = index
        // Fast path: no escapes.
        let run = JSONStringScan.plainRun(bytes, from: index)
        index = run.end
        if index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                // ASCII is valid UTF-8 as it stands: decoding it skips the generic validation
                // (which looks up type metadata on every call, for every key and value).
                if run.isASCII { return String(decoding: slice, as: UTF8.self) }
                guard let text = String(validating: slice, as: UTF8.self) else { throw failure("invalid UTF-8 in a string") }
                return text
            }
            if byte < 0x20 { throw failure("unescaped control character in a string") }
        }
        var scratch = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: scratch, as: UTF8.self) else { throw failure("invalid UTF-8 in a string") }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                try parseEscape(into: &scratch)
            case 0..<0x20:
                throw failure("unescaped control character in a string")
            default:
                let stop = JSONStringScan.plainRun(bytes, from: index).end
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<stop]))
                index = stop
            }
        }
        throw failure("unterminated string")
    }

    private mutating func parseEscape(into scratch: inout [UInt8]) throws(ValidationError) {
        guard index < bytes.count else { throw failure("unterminated string") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): scratch.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): scratch.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): scratch.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4()
            if (0xD800...0xDBFF).contains(scalar) {
                if let low = lowSurrogateEscape() {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    scalar = Self.replacementCharacter
                }
            } else if (0xDC00...0xDFFF).contains(scalar) {
                scalar = Self.replacementCharacter
            }
            guard let unicode = Unicode.Scalar(scalar), let encoded = UTF8.encode(unicode) else { throw failure("invalid \\u escape") }
            scratch.append(contentsOf: encoded)
        default:
            throw failure("invalid escape")
        }
    }

    /// U+FFFD, which a lone surrogate in a `\u` escape becomes.
    private static let replacementCharacter: UInt32 = 0xFFFD

    /// The low surrogate of a `\uDC00`…`\uDFFF` escape that follows, taken; nil (nothing
    /// taken) when the next bytes are anything else, which are then read as they stand.
    private mutating func lowSurrogateEscape() -> UInt32? {
        guard index + 6 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { return nil }
        let start = index
        index += 2
        guard let low = try? parseHex4(), (0xDC00...0xDFFF).contains(low) else {
            index = start
            return nil
        }
        return low
    }

    private mutating func parseHex4() throws(ValidationError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw failure("invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(ValidationError) -> Double {
        let start = index
        var simpleInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw failure("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            simpleInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            simpleInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
        // Integers of up to 15 digits are exact in a double: skip the general parser.
        if simpleInteger, text.count <= 16 {
            var value: Int64 = 0
            var negative = false
            for byte in text {
                if byte == UInt8(ascii: "-") { negative = true } else { value = value * 10 + Int64(byte - UInt8(ascii: "0")) }
            }
            if value < 1 << 53 { return negative ? -Double(value) : Double(value) }
        }
        guard let value = Double(String(decoding: text, as: UTF8.self)) else { throw failure("invalid number") }
        guard value.isFinite else {
            throw ValidationError(.invalidNumber, "Number \(String(decoding: text, as: UTF8.self)) is out of range")
        }
        return value
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
