import Testing

@testable import KindlingCore

struct JSONTests {
    @Test func parsesEveryKind() throws {
        let value = try JSONParser.parse(#" {"a": [1, -2.5e3, true, false, null], "b": "x\"\\\/\n\u00e9\ud83d\ude00", "c": {}} "#)
        #expect(value["a"] == .array([.number(1), .number(-2500), .bool(true), .bool(false), .null]))
        #expect(value["b"] == .string("x\"\\/\n\u{E9}\u{1F600}"))
        #expect(value["c"] == .object([]))
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "+1", "nul", "\"abc", "\"\\x\"", "\"\\ud800\\uZZZZ\"",
        "\"\\ud800\\u12\"", "\"\\ud800", "1 2", "[1e]", "{\"a\" 1}", "\"tab\tin\"", "NaN", "Infinity", "-", "1e999",
    ])
    func rejectsMalformedText(text: String) {
        #expect(throws: ValidationError.self) { try JSONParser.parse(text) }
    }

    /// A lone surrogate in a `\u` escape (what `JSON.stringify` writes for a string cut through
    /// an emoji) becomes U+FFFD; whatever follows it is read as it stands.
    @Test(arguments: [
        (#""\ud800""#, "\u{FFFD}"),
        (#""\udc00x""#, "\u{FFFD}x"),
        (#""see you \ud83d""#, "see you \u{FFFD}"),
        (#""\ud83d\u0041""#, "\u{FFFD}A"),
        (#""\ud83d\ud83d\ude00""#, "\u{FFFD}\u{1F600}"),
        (#""\ude00\ud83d""#, "\u{FFFD}\u{FFFD}"),
        (#""\ud83d\n""#, "\u{FFFD}\n"),
        (#""\uD83D\uDE00""#, "\u{1F600}"),
    ])
    func loneSurrogatesBecomeTheReplacementCharacter(text: String, expected: String) throws {
        #expect(try JSONParser.parse(text) == .string(expected))
        #expect(try JSONParser.parse("{\(text):1}") == .object([JSONMember(expected, .number(1))]))
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: ValidationError.self) { try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
    }

    @Test func capsNesting() {
        let deep = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        #expect(throws: ValidationError.self) { try JSONParser.parse(deep) }
    }

    @Test(arguments: [
        (0.0, "0"), (-0.0, "-0"), (5, "5"), (-17, "-17"), (0.1, "0.1"), (1.5e300, "1.5e+300"), (1e21, "1e+21"),
        (1e20, "100000000000000000000"), (123_456_789_012_345_680_000, "123456789012345680000"), (1e-7, "1e-7"),
        (0.000001, "0.000001"), (1.2345e-5, "0.000012345"), (9_007_199_254_740_993, "9007199254740992"),
        (12_345_678_901_234_567, "12345678901234568"), (-1.7976931348623157e308, "-1.7976931348623157e+308"),
        (5e-324, "5e-324"), (2.5, "2.5"), (100.25, "100.25"), (18_446_744_073_709_551_616, "18446744073709552000"),
    ])
    func writesNumbersLikeJavaScript(value: Double, text: String) {
        #expect(JSNumberFormat.string(value) == text)
    }

    @Test func doublesRoundTripBitForBit() throws {
        var generator = SeededGenerator(seed: 3)
        for _ in 0..<20_000 {
            let bits = generator.next()
            let value = Double(bitPattern: bits)
            guard value.isFinite else { continue }
            let text = JSNumberFormat.string(value)
            let parsed = try JSONParser.parse(text)
            #expect(parsed.numberValue?.bitPattern == value.bitPattern, "\(text)")
        }
    }

    @Test func writesStringsWithMinimalEscapes() {
        #expect(JSONWriter.string(.string("a\"b\\c\n\u{1}\u{7F}é😀")) == "\"a\\\"b\\\\c\\n\\u0001\u{7F}é😀\"")
    }

    @Test func objectMembersKeepOrderAndDuplicates() throws {
        let value = try JSONParser.parse(#"{"b":1,"a":2,"b":3}"#)
        #expect(JSONWriter.string(value) == #"{"b":1,"a":2,"b":3}"#)
        #expect(value["b"] == .number(3))
    }

    /// Member lookup compares UTF-8 bytes (its count and first byte settle most mismatches):
    /// never canonical equivalence, and the last of repeated names wins.
    @Test func memberLookupComparesBytes() throws {
        let value = try JSONParser.parse(#"{"ab":1,"ac":2,"\u212a":3,"caf\u00e9":4,"ab":5,"a":6,"":7}"#)
        #expect(value["ab"] == .number(5))
        #expect(value["ac"] == .number(2))
        #expect(value["a"] == .number(6))
        #expect(value[""] == .number(7))
        #expect(value["K"] == nil)
        #expect(value["\u{212A}"] == .number(3))
        #expect(value["cafe\u{301}"] == nil)
        #expect(value["caf\u{E9}"] == .number(4))
        #expect(value["ad"] == nil)
        #expect(value["abc"] == nil)
        #expect(JSONValue.array([.null])["a"] == nil)
    }
}

/// Log records and events write paths straight from their keys: the bytes must be those of the
/// path's string, escapes included (keys of up to eight bytes are written from their cached
/// prefix, longer ones from their string).
struct JSONWriterPathTests {
    @Test(arguments: [
        [], ["a"], ["users", "u1", "name"], ["é😀", "tab\there", #"quo"te"#, #"back\slash"#, "new\nline"], ["1", "-2", ".priority"],
        ["12345678", "123456789", #"""#, #"a\b"#, "\u{7F}", "ü", "-OaBcDeFgHiJkLmNoPq"],
    ])
    func writesAPathAsItsStringWouldBeWritten(keys: [String]) {
        let path = Path(keys: keys.map { Key(unchecked: $0) })
        var direct = JSONWriter()
        direct.write(relativePath: path)
        var viaString = JSONWriter()
        viaString.write(path.relativeString)
        #expect(direct.bytes == viaString.bytes)
    }
}
