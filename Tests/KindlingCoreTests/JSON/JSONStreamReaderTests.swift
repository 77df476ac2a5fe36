import KindlingCore
import Testing

/// `JSONStreamReader` reads a text cut into pieces anywhere exactly as `JSONParser` reads it
/// whole, with the same tokens and offsets however it is cut, and says where a bad text fails.
struct JSONStreamReaderTests {
    /// Reads `text` fed in pieces that end at `cuts`, and returns its tokens.
    private static func tokens(_ text: [UInt8], cuts: [Int] = [], reader: JSONStreamReader = JSONStreamReader()) throws(JSONStreamError)
        -> [JSONStreamReader.Token]
    {
        var reader = reader
        var tokens: [JSONStreamReader.Token] = []
        var from = 0
        for cut in cuts.sorted() + [text.count] where cut >= from {
            reader.feed(Array(text[from..<cut]))
            from = cut
            while let token = try reader.next() { tokens.append(token) }
        }
        reader.finish()
        while let token = try reader.next() { tokens.append(token) }
        #expect(reader.isComplete)
        return tokens
    }

    /// The value the tokens spell, built as a test would by hand.
    private static func value(of tokens: [JSONStreamReader.Token]) -> JSONValue {
        var index = 0
        func read() -> JSONValue {
            let token = tokens[index]
            index += 1
            switch token.event {
            case .value(let value): return value
            case .arrayStart:
                var elements: [JSONValue] = []
                while tokens[index].event != .arrayEnd { elements.append(read()) }
                index += 1
                return .array(elements)
            case .objectStart:
                var members: [JSONMember] = []
                while case .key(let name) = tokens[index].event {
                    index += 1
                    members.append(JSONMember(name, read()))
                }
                index += 1
                return .object(members)
            case .key, .objectEnd, .arrayEnd:
                Issue.record("unexpected \(token)")
                return .null
            }
        }
        return read()
    }

    private static func error(_ text: String, cuts: [Int] = [], reader: JSONStreamReader = JSONStreamReader()) -> JSONStreamError? {
        do {
            _ = try tokens(Array(text.utf8), cuts: cuts, reader: reader)
            return nil
        } catch {
            return error
        }
    }

    private static let sample = #"""
         {"a": [1, -2.5e-3, true, false, null, "x\"y\\z\/\u00e9\ud83d\ude00é"], "b\n": {"c": {}, "d": []},
         "": 0, "n": 123456789012345678901234567890, "ℤ": "\ud800 lone", "e": 1E+2}
        """#

    @Test func everyCutGivesTheSameTokensAsTheWholeText() throws {
        let text = Array(Self.sample.utf8)
        let whole = try Self.tokens(text)
        #expect(Self.value(of: whole) == (try JSONParser.parse(text)))
        for cut in 0...text.count {
            #expect(try Self.tokens(text, cuts: [cut]) == whole, "cut at \(cut)")
        }
        // One byte at a time.
        #expect(try Self.tokens(text, cuts: Array(0...text.count)) == whole)
    }

    @Test func tokensSayWhereTheyAre() throws {
        let text = #"{"ab": [1, "c"]}"#
        let tokens = try Self.tokens(Array(text.utf8))
        let expected: [JSONStreamReader.Token] = [
            .init(.objectStart, start: 0, end: 1), .init(.key("ab"), start: 1, end: 5), .init(.arrayStart, start: 7, end: 8),
            .init(.value(1), start: 8, end: 9), .init(.value("c"), start: 11, end: 14), .init(.arrayEnd, start: 14, end: 15),
            .init(.objectEnd, start: 15, end: 16),
        ]
        #expect(tokens == expected)
    }

    @Test func randomTextsCutAtRandomReadAsParsedWhole() throws {
        var generator = SeededGenerator(seed: 39)
        for _ in 0..<200 {
            let json = Self.random(depth: 0, &generator)
            let text = Array(JSONWriter.string(json).utf8)
            let cuts = (0..<Int.random(in: 0...6, using: &generator)).map { _ in Int.random(in: 0...text.count, using: &generator) }
            #expect(Self.value(of: try Self.tokens(text, cuts: cuts)) == (try JSONParser.parse(text)))
        }
    }

    @Test func numbersRoundTripBitForBit() throws {
        var generator = SeededGenerator(seed: 7)
        var doubles: [Double] = [0, -0.0, 1e300, -1e-300, 5e-324, .greatestFiniteMagnitude, 0.1, 1 / 3, 9_007_199_254_740_993]
        for _ in 0..<2000 {
            let double = Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &generator))
            if double.isFinite { doubles.append(double) }
        }
        let text = Array(JSONWriter.string(.array(doubles.map(JSONValue.number))).utf8)
        let cuts = (0..<300).map { _ in Int.random(in: 0...text.count, using: &generator) }
        let read = try Self.tokens(text, cuts: cuts).compactMap { token -> Double? in
            if case .value(.number(let number)) = token.event { return number }
            return nil
        }
        #expect(read.count == doubles.count)
        for (got, wrote) in zip(read, doubles) where got.bitPattern != wrote.bitPattern {
            Issue.record("\(wrote) came back as \(got)")
        }
    }

    @Test func nestingIsCappedWhereTheReaderSays() {
        let deepest = String(repeating: "[", count: 128) + String(repeating: "]", count: 128)
        #expect(Self.error(deepest) == nil)
        let tooDeep = Self.error(String(repeating: "[", count: 129) + String(repeating: "]", count: 129))
        #expect(tooDeep?.kind == .tooDeep && tooDeep?.offset == 128)
        let capped = Self.error(#"{"a":{"b":{}}}"#, reader: JSONStreamReader(maxNesting: 2))
        #expect(capped?.kind == .tooDeep && capped?.offset == 10)
    }

    @Test func aTextCutShortSaysWhereItEnds() {
        let text = #"{"a":[1,"two",{"three":true}],"b":null}"#
        for length in 0..<text.utf8.count {
            let prefix = String(decoding: text.utf8.prefix(length), as: UTF8.self)
            let error = Self.error(prefix, cuts: [length / 2])
            #expect(error?.kind == .truncated, "\(prefix)")
            #expect(error?.offset ?? -1 >= 0 && error?.offset ?? .max <= length, "\(prefix)")
        }
        #expect(Self.error("")?.description == "The JSON ends early at byte 0: no JSON value")
    }

    @Test func badTextSaysWhereAndWhy() {
        #expect(Self.error("hello")?.description == "Invalid JSON at byte 0: unexpected character")
        #expect(Self.error(#"{"a":1,}"#)?.description == "Invalid JSON at byte 7: expected a member name")
        #expect(Self.error(#"{"a" 1}"#)?.description == "Invalid JSON at byte 5: expected ':'")
        #expect(Self.error(#"[1 2]"#)?.description == "Invalid JSON at byte 3: expected ',' or ']'")
        #expect(Self.error(#"{"a":1]"#)?.description == "Invalid JSON at byte 6: expected ',' or '}'")
        #expect(Self.error(#"{} {}"#)?.description == "Invalid JSON at byte 3: unexpected text after the value")
        #expect(Self.error(#"[01]"#)?.kind == .invalid)
        #expect(Self.error(#"[tru]"#)?.description == "Invalid JSON at byte 4: unexpected character")
        // An escape's fault is just past it (as the whole-text parser says), wherever the text was cut.
        let badEscape = #"["abc\q"]"#
        for cut in 0...badEscape.utf8.count {
            #expect(Self.error(badEscape, cuts: [cut])?.description == "Invalid JSON at byte 7: invalid escape")
        }
        #expect(Self.error("[\"\u{1}\"]")?.description == "Invalid JSON at byte 2: unescaped control character in a string")
        let invalidUTF8: [UInt8] = Array(#"["#.utf8) + [0x22, 0xC3, 0x28, 0x22, 0x5D]
        #expect(throws: JSONStreamError.self) { try Self.tokens(invalidUTF8) }
    }

    @Test func aHugeTokenIsRefusedBeforeItIsHeld() {
        let reader = JSONStreamReader(maxTokenBytes: 16)
        #expect(Self.error(#"["0123456789abcdef"]"#, cuts: [5, 10], reader: reader)?.kind == .tokenTooLong)
        #expect(Self.error(#"["0123456789abcd"]"#, reader: reader) == nil)
        #expect(Self.error("[" + String(repeating: "1", count: 17) + "]", reader: reader)?.kind == .tokenTooLong)
    }

    private static func random(depth: Int, _ generator: inout SeededGenerator) -> JSONValue {
        let strings = ["", "plain", #"q"uote"#, "back\\slash", "tab\tnew\nline", "é😀", "\u{7f}\u{0}"]
        switch Int.random(in: 0..<(depth > 3 ? 5 : 8), using: &generator) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .number(Double(Int.random(in: -100_000...100_000, using: &generator)) / 8)
        case 3, 4: return .string(strings.randomElement(using: &generator)!)
        case 5: return .array((0..<Int.random(in: 0...4, using: &generator)).map { _ in random(depth: depth + 1, &generator) })
        default:
            return .object(
                (0..<Int.random(in: 0...4, using: &generator)).map { index in
                    JSONMember(strings.randomElement(using: &generator)! + "\(index)", random(depth: depth + 1, &generator))
                })
        }
    }
}
