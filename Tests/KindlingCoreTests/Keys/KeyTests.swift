import Testing

@testable import KindlingCore

struct KeyTests {
    @Test(arguments: ["a.b", "a$", "#", "[x", "y]", "a/b", "", "tab\t", "nul\u{0}", "del\u{7F}"])
    func forbiddenKeysAreRefusedNamingTheKey(text: String) {
        #expect(throws: ValidationError.self) { try Key(text) }
        do {
            _ = try Key(text)
        } catch {
            #expect(error.kind == .invalidKey)
            #expect(error.message.contains("Invalid key"))
        }
    }

    @Test func keysUpTo768BytesAreAccepted() throws {
        _ = try Key(String(repeating: "é", count: 384))
        #expect(throws: ValidationError.keyTooLong(String(repeating: "é", count: 385))) {
            try Key(String(repeating: "é", count: 385))
        }
    }

    @Test func equalityIsByteEqualityNotCanonicalEquivalence() throws {
        let composed = try Key(String("caf\u{E9}"))
        let decomposed = try Key(String("cafe\u{301}"))
        #expect("caf\u{E9}" == "cafe\u{301}")
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        #expect(Key.compare(composed, decomposed) != 0)
    }

    @Test func integerKeysSortFirstAndNumerically() {
        let keys: [Key] = ["b", "10", "-5", "a", "9", "01", "1", "2147483647", "2147483648", "-2147483648"]
        let sorted = keys.sorted().map(\.string)
        #expect(sorted == ["-2147483648", "-5", "1", "01", "9", "10", "2147483647", "2147483648", "a", "b"])
    }

    @Test func integerReading() {
        #expect(Key.parseInteger("0") == 0)
        #expect(Key.parseInteger("-0") == 0)
        #expect(Key.parseInteger("007") == 7)
        #expect(Key.parseInteger("0000000000001234567890") == 1_234_567_890)
        #expect(Key.parseInteger("12345678901") == nil)
        #expect(Key.parseInteger("-") == nil)
        #expect(Key.parseInteger("1a") == nil)
        #expect(Key.parseInteger("+1") == nil)
        #expect(Key.parseInteger("") == nil)
    }

    @Test func utf16OrderMatchesTheUTF16View() {
        let samples = [
            "", "a", "ab", "b", "é", "\u{FF5E}", "\u{E000}", "\u{1F600}", "\u{10000}", "a\u{1F600}", "a\u{FFFF}",
            "Z", "zz", "\u{7F}", "\u{80}", "\u{7FF}", "\u{800}", "\u{D7FF}", "\u{10FFFF}",
        ]
        for lhs in samples {
            for rhs in samples {
                let expected = lhs.utf16.lexicographicallyPrecedes(rhs.utf16) ? -1 : (Array(lhs.utf16) == Array(rhs.utf16) ? 0 : 1)
                #expect(UTF16Order.compare(lhs, rhs).signum() == expected, "\(lhs.unicodeScalars.map(\.value)) vs \(rhs.unicodeScalars.map(\.value))")
            }
        }
    }

    @Test func utf16OrderOnRandomStrings() {
        var generator = SeededGenerator(seed: 11)
        let pool: [Unicode.Scalar] = ["a", "b", "\u{E9}", "\u{FFFD}", "\u{E000}", "\u{1F600}", "\u{10400}", "\u{7FF}", "\u{FFFF}"]
        for _ in 0..<5000 {
            func word() -> String {
                String(String.UnicodeScalarView((0..<Int.random(in: 0...4, using: &generator)).map { _ in pool.randomElement(using: &generator)! }))
            }
            let (lhs, rhs) = (word(), word())
            let expected = lhs.utf16.lexicographicallyPrecedes(rhs.utf16) ? -1 : (Array(lhs.utf16) == Array(rhs.utf16) ? 0 : 1)
            #expect(UTF16Order.compare(lhs, rhs).signum() == expected)
        }
    }

    /// The order a snapshot reader checks on raw bytes is the order of `Key`s.
    @Test func byteOrderAgreesWithKeyOrder() {
        let pool = [
            "0", "1", "01", "001", "10", "-1", "-01", "2147483647", "2147483648", "-2147483648", "-2147483649", "a", "ab", "b",
            "é", "e\u{301}", "\u{FFFF}", "😀", "\u{E000}", "longer-than-eight-bytes", "longer-than-eight-bytez", "x y", "9a",
        ]
        for lhs in pool {
            for rhs in pool {
                let expected = Key.compare(Key(stringLiteral: lhs), Key(stringLiteral: rhs)).signum()
                let actual = Array(lhs.utf8).withUnsafeBufferPointer { l in Array(rhs.utf8).withUnsafeBufferPointer { r in Key.compare(utf8: l, r) } }
                #expect(actual.signum() == expected, "\(lhs) vs \(rhs)")
            }
        }
    }
}
