import Testing

@testable import KindlingCore

/// The `matches()` regular expression subset (rules spec §8): what loads, and how it matches.
struct RuleRegexTests {
    static func regex(_ pattern: String, _ flags: String = "") throws -> RuleRegex {
        try RuleRegex(pattern: pattern, flags: flags, offset: 0)
    }

    @Test(arguments: [
        ("a", "ba", true), ("^a", "ba", false), ("a$", "ba", true), ("a$", "ab", false), ("^\\d+$", "123", true),
        ("^\\d+$", "12a", false), ("^[a-z]{2,3}$", "ab", true), ("^[a-z]{2,3}$", "abcd", false), ("^[a-z]{2,3}$", "a", false),
        ("^(foo|bar)+$", "foobarfoo", true), ("^(foo|bar)+$", "foobaz", false), ("[^0-9]", "123", false), ("[^0-9]", "12a", true),
        ("\\s", "a b", true), ("\\S", "   ", false), ("^.$", "\n", false), ("^.$", "é", true), ("^\\w+@\\w+\\.com$", "bob@example.com", true),
        ("(?:foo)", "?:foo", true), ("(?:foo)", "foo", false), ("\\{foo}", "{foo}", true), ("^a{1,}$", "aaa", true),
        ("^a{2}$", "aaa", false), ("^a?b*c+$", "c", true), ("^[a\\-z]+$", "a-z", true), ("^[\\d.]+$", "1.5", true),
        ("x*", "", true), ("^$", "", true), ("^-?\\d+(\\.\\d+)?$", "-12.5", true), ("*a", "*a", true),
    ])
    func matchesBySearch(_ pattern: String, _ text: String, _ expected: Bool) throws {
        #expect(try RuleRegexTests.regex(pattern).matches(text) == expected)
    }

    /// The one-word simulation (programs of at most 64 instructions) answers as the lists do, on
    /// random patterns of the subset and random texts.
    @Test func theWordSimulationAgreesWithTheLists() throws {
        var random = SeededGenerator(seed: 0x2E6E_0001)
        let atoms = ["a", "b", "ab", ".", "[a-c]", "[^b]", "\\d", "\\w", "\\s", "(a|b)", "(ab|c|)", "(?:ba)", "(a|bc)"]
        let suffixes = ["", "", "*", "+", "?", "{2}", "{1,3}", "{0,}"]
        let letters = Array("abc1 .A")
        var checked = 0
        var matched = 0
        for _ in 0..<600 {
            var pattern = Bool.random(using: &random) ? "^" : ""
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                pattern += atoms.randomElement(using: &random)! + suffixes.randomElement(using: &random)!
            }
            if Bool.random(using: &random) { pattern += "$" }
            guard let regex = try? RuleRegexTests.regex(pattern, Bool.random(using: &random) ? "i" : "") else { continue }
            guard !regex.closures.isEmpty else { continue }
            for _ in 0..<20 {
                let text = String((0..<Int.random(in: 0...6, using: &random)).map { _ in letters.randomElement(using: &random)! })
                let expected = regex.matchesByLists(text)
                #expect(regex.matchesInWord(text) == expected, "\(pattern) on \"\(text)\"")
                checked += 1
                if expected { matched += 1 }
            }
        }
        #expect(checked > 5000 && matched > 1000 && checked - matched > 1000)
    }

    @Test func theIFlagIgnoresCase() throws {
        #expect(try RuleRegexTests.regex("BAR", "i").matches("a bar"))
        #expect(try RuleRegexTests.regex("^[A-Z]+$", "i").matches("qwe"))
        #expect(try RuleRegexTests.regex("^[a-z]+$", "i").matches("QWE"))
        #expect(try !RuleRegexTests.regex("^[a-z]+$").matches("QWE"))
    }

    @Test(arguments: ["(^foo$|bar)", "^(foo|)$", "a|", "|a", "(a", "a)", "a^", "$a", "a{3,2}", "[b-a]", "[ab", "a\\", "()", "a**"])
    func refusesPatternsOutsideTheSubset(_ pattern: String) {
        #expect(throws: RuleCompileError.self) { try RuleRegexTests.regex(pattern) }
    }

    @Test func refusesFlagsOtherThanI() {
        #expect(throws: RuleCompileError.self) { try RuleRegexTests.regex("bar", "ig") }
        #expect(throws: RuleCompileError.self) { try RuleRegexTests.regex("bar", "g") }
    }

    @Test func nestedRepeatsStayLinear() throws {
        let text = String(repeating: "a", count: 20_000)
        #expect(try !RuleRegexTests.regex("(a*)*b").matches(text))
        #expect(try RuleRegexTests.regex("^(a|aa)+$").matches(text))
        #expect(throws: RuleCompileError.self) { try RuleRegexTests.regex("a{1001}") }
    }
}
