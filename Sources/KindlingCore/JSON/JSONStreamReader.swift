/// Reads a JSON text that arrives in pieces, one token at a time, holding only the token being
/// read: a file of gigabytes is read in the memory of its largest string.
///
/// Written here because no kept library reads JSON incrementally (Foundation's parsers and
/// `JSONParser` need the whole text). It only finds where tokens begin and end and checks the
/// grammar between them; each string and number is decoded by `JSONParser`, so escapes, UTF-8
/// checks and rounding are exactly those of a text parsed whole, wherever the pieces are cut.
///
/// `feed` the pieces, call `next` until it returns nil (it needs more), and `finish` after the
/// last piece: `next` then returns the rest and throws if the text was cut short.
public struct JSONStreamReader: Sendable {
    /// What a token is.
    public enum Event: Sendable, Equatable {
        case objectStart
        /// A member's name (the value follows as the next token or tokens).
        case key(String)
        case objectEnd
        case arrayStart
        case arrayEnd
        /// A string, number, boolean or null.
        case value(JSONValue)
    }

    /// One token and where it lies in the whole text (`end` is just past it).
    public struct Token: Sendable, Equatable {
        public var event: Event
        public var start: Int
        public var end: Int

        public init(_ event: Event, start: Int, end: Int) {
            self.event = event
            self.start = start
            self.end = end
        }
    }

    /// What may come next in the grammar.
    private enum Expect: Sendable {
        case value
        /// Just after `[`: a value or `]`.
        case valueOrArrayEnd
        /// Just after `{`: a member name or `}`.
        case keyOrObjectEnd
        case key
        case colon
        /// After a value inside a container.
        case commaOrEnd
        /// After the whole value: only whitespace.
        case end
    }

    /// The deepest nesting of objects and arrays accepted.
    public let maxNesting: Int
    /// The longest string or number accepted, in bytes of text.
    public let maxTokenBytes: Int

    private var buffer: [UInt8] = []
    /// The next byte of `buffer` to read.
    private var position = 0
    /// The offset in the whole text of `buffer[0]`.
    private var base = 0
    private var ended = false
    /// The open containers, innermost last: true for an array.
    private var containers: [Bool] = []
    private var expect = Expect.value
    /// Bytes of the string at `position` already searched for its end, and whether that search
    /// stopped just after a backslash, so a long string arriving in many pieces is scanned once.
    private var scanned = 0
    private var scannedEscape = false

    public init(maxNesting: Int = JSONParser.maxNesting, maxTokenBytes: Int = 64 * 1024 * 1024) {
        self.maxNesting = maxNesting
        self.maxTokenBytes = maxTokenBytes
    }

    /// Bytes of the text read up to the end of the last token returned (and the whitespace
    /// after it).
    public var offset: Int { base + position }

    /// True once a whole value has been read.
    public var isComplete: Bool { expect == .end }

    /// Adds the next piece of the text.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        if position > 0 {
            // What is left is at most the token being read: usually a few bytes.
            buffer.removeSubrange(0..<position)
            base += position
            position = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Adds the next piece of the text.
    public mutating func feed(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { feed($0) }
    }

    /// Says the text has no more pieces.
    public mutating func finish() { ended = true }

    /// The next token; nil when the pieces fed so far hold no whole one (or, after `finish`,
    /// when the value is complete).
    public mutating func next() throws(JSONStreamError) -> Token? {
        // A local reference to the bytes, so reading them does not overlap changes to `self`.
        let bytes = buffer
        let result: Result<Token?, JSONStreamError> = bytes.withUnsafeBufferPointer { bytes in
            Result { () throws(JSONStreamError) in try read(bytes) }
        }
        return try result.get()
    }

    private mutating func read(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONStreamError) -> Token? {
        while true {
            while position < bytes.count, Self.isBlank(bytes[position]) { position += 1 }
            guard position < bytes.count else {
                guard ended, expect != .end else { return nil }
                throw JSONStreamError(
                    .truncated, offset: offset, expect == .value && containers.isEmpty ? "no JSON value" : "the text stops inside a value")
            }
            let byte = bytes[position]
            let start = offset
            switch expect {
            case .end:
                throw JSONStreamError(.invalid, offset: start, "unexpected text after the value")
            case .colon:
                guard byte == UInt8(ascii: ":") else { throw JSONStreamError(.invalid, offset: start, "expected ':'") }
                position += 1
                expect = .value
                continue
            case .commaOrEnd:
                let isArray = containers.last == true
                if byte == UInt8(ascii: ",") {
                    position += 1
                    expect = isArray ? .value : .key
                    continue
                }
                guard byte == (isArray ? UInt8(ascii: "]") : UInt8(ascii: "}")) else {
                    throw JSONStreamError(.invalid, offset: start, isArray ? "expected ',' or ']'" : "expected ',' or '}'")
                }
                return close(isArray: isArray, start: start)
            case .keyOrObjectEnd where byte == UInt8(ascii: "}"):
                return close(isArray: false, start: start)
            case .valueOrArrayEnd where byte == UInt8(ascii: "]"):
                return close(isArray: true, start: start)
            case .keyOrObjectEnd, .key:
                guard byte == UInt8(ascii: "\"") else { throw JSONStreamError(.invalid, offset: start, "expected a member name") }
                guard let end = try stringEnd(bytes) else { return nil }
                guard case .string(let name) = try decode(bytes, end: end) else {
                    throw JSONStreamError(.invalid, offset: start, "expected a member name")
                }
                expect = .colon
                return Token(.key(name), start: start, end: offset)
            case .value, .valueOrArrayEnd:
                return try value(bytes, byte: byte, start: start)
            }
        }
    }

    private mutating func value(_ bytes: UnsafeBufferPointer<UInt8>, byte: UInt8, start: Int) throws(JSONStreamError) -> Token? {
        let end: Int
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let isArray = byte == UInt8(ascii: "[")
            guard containers.count < maxNesting else {
                throw JSONStreamError(.tooDeep, offset: start, "nested deeper than \(maxNesting) levels")
            }
            containers.append(isArray)
            position += 1
            expect = isArray ? .valueOrArrayEnd : .keyOrObjectEnd
            return Token(isArray ? .arrayStart : .objectStart, start: start, end: offset)
        case UInt8(ascii: "\""):
            guard let found = try stringEnd(bytes) else { return nil }
            end = found
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            let literal: StaticString = byte == UInt8(ascii: "t") ? "true" : byte == UInt8(ascii: "f") ? "false" : "null"
            let length = literal.utf8CodeUnitCount
            for index in 0..<min(length, bytes.count - position) where bytes[position + index] != literal.utf8Start[index] {
                throw JSONStreamError(.invalid, offset: start + index, "unexpected character")
            }
            guard bytes.count - position >= length else {
                guard ended else { return nil }
                throw JSONStreamError(.truncated, offset: start, "the text stops inside a literal")
            }
            end = position + length
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            var index = position
            while index < bytes.count, Self.isNumberByte(bytes[index]) { index += 1 }
            guard index - position <= maxTokenBytes else {
                throw JSONStreamError(.tokenTooLong, offset: start, "a number longer than \(maxTokenBytes) bytes")
            }
            // A number at the end of what has arrived may go on in the next piece.
            guard index < bytes.count || ended else { return nil }
            end = index
        default:
            throw JSONStreamError(.invalid, offset: start, "unexpected character")
        }
        let value = try decode(bytes, end: end)
        expect = containers.isEmpty ? .end : .commaOrEnd
        return Token(.value(value), start: start, end: offset)
    }

    /// Leaves the innermost container (its closing byte is at `position`).
    private mutating func close(isArray: Bool, start: Int) -> Token {
        containers.removeLast()
        position += 1
        expect = containers.isEmpty ? .end : .commaOrEnd
        return Token(isArray ? .arrayEnd : .objectEnd, start: start, end: offset)
    }

    /// The index just past the closing quote of the string that starts at `position`; nil when
    /// it has not all arrived yet.
    private mutating func stringEnd(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONStreamError) -> Int? {
        var index = position + 1 + scanned
        var escaped = scannedEscape
        while index < bytes.count {
            let byte = bytes[index]
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                guard index + 1 - position <= maxTokenBytes else {
                    throw JSONStreamError(.tokenTooLong, offset: offset, "a string longer than \(maxTokenBytes) bytes")
                }
                scanned = 0
                scannedEscape = false
                return index + 1
            }
            index += 1
        }
        guard index - position <= maxTokenBytes else {
            throw JSONStreamError(.tokenTooLong, offset: offset, "a string longer than \(maxTokenBytes) bytes")
        }
        guard !ended else { throw JSONStreamError(.truncated, offset: base + bytes.count, "the text stops inside a string") }
        scanned = index - position - 1
        scannedEscape = escaped
        return nil
    }

    /// Decodes the token from `position` to `end` with `JSONParser` and moves past it.
    private mutating func decode(_ bytes: UnsafeBufferPointer<UInt8>, end: Int) throws(JSONStreamError) -> JSONValue {
        do {
            let value = try JSONParser.token(UnsafeBufferPointer(rebasing: bytes[position..<end]))
            position = end
            return value
        } catch {
            throw JSONStreamError(.invalid, offset: offset + error.index, error.reason)
        }
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// Bytes a JSON number may hold; which order they may come in is `JSONParser`'s to check.
    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
            true
        default: false
        }
    }
}
