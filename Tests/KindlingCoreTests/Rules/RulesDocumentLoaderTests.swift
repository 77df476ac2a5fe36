import Testing

@testable import KindlingCore

/// Loading rules documents: the JSON superset, and every structural and expression error at its
/// line and column (rules spec §1, §4.1).
struct RulesDocumentLoaderTests {
    /// The error loading `text` gives (nil when it loads).
    static func error(_ text: String) -> RulesError? {
        do {
            _ = try RulesDocument.parse(text)
            return nil
        } catch {
            return error
        }
    }

    static func expectError(
        _ text: String, at line: Int, _ column: Int, rulePath: String, containing part: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let error = error(text) else {
            Issue.record("loaded, expected an error", sourceLocation: sourceLocation)
            return
        }
        #expect(error.line == line, "\(error)", sourceLocation: sourceLocation)
        #expect(error.column == column, "\(error)", sourceLocation: sourceLocation)
        #expect(error.rulePath == rulePath, "\(error)", sourceLocation: sourceLocation)
        #expect(error.message.contains(part), "\(error)", sourceLocation: sourceLocation)
    }

    /// A long flat chain makes the syntax tree as deep as it is long; it is refused at load
    /// instead of overflowing the stack when compiled, evaluated or freed.
    @Test func longChainsAreRefusedNotRecursedInto() throws {
        let sum = Array(repeating: "1", count: 50_000).joined(separator: " + ") + " == 1"
        let members = "auth" + String(repeating: ".a", count: 50_000) + " == 1"
        let calls = "auth.uid.toLowerCase()" + String(repeating: ".toLowerCase()", count: 50_000) + " == ''"
        // A staircase: each parenthesised chain is the first link of a longer one, so the
        // tree grows with the square of the parentheses while no point of it is read deep.
        let staircase = { (base: String, link: String, levels: Int) -> String in
            var text = base
            for level in 1...levels { text = "(" + text + ")" + String(repeating: link, count: level) }
            return text
        }
        let sums = staircase("1", " + 1", 90) + " > 0"
        let comparisons = staircase("true", " == true", 150)
        let parents = staircase("data", ".parent()", 150) + ".exists()"
        for rule in [sum, members, calls, sums, comparisons, parents] {
            let error = try #require(Self.error("{\"rules\": {\".read\": \"\(rule)\"}}"))
            #expect(error.message.contains("nests too deeply"), "\(error)")
        }
        // A chain of a few hundred links, as generated rules may have, still loads and runs.
        let allowed = (0..<300).map { "auth.uid == 'u\($0)'" }.joined(separator: " || ")
        let rules = try RulesDocument.parse("{\"rules\": {\".read\": \"\(allowed)\"}}")
        let auth = JSONValue.object([JSONMember("uid", .string("u299"))])
        #expect(rules.canRead(.root, auth: auth, root: .empty, query: nil, now: 0).allowed)
        #expect(!rules.canRead(.root, auth: .object([JSONMember("uid", .string("x"))]), root: .empty, query: nil, now: 0).allowed)
    }

    /// `||` and `&&` chains are one node each, however long: a list of 20,000 allowed users
    /// loads, and is evaluated in order, stopping at the first operand that decides.
    @Test func longLogicalChainsLoadAndRun() throws {
        let anyOf = (0..<20_000).map { "auth.uid == 'u\($0)'" }.joined(separator: " || ")
        let allOf = (0..<20_000).map { "auth.n != \($0)" }.joined(separator: " && ")
        let rules = try RulesDocument.parse("{\"rules\": {\"a\": {\".read\": \"\(anyOf)\"}, \"b\": {\".read\": \"\(allOf) && auth.uid != 'x'\"}}}")
        let user = { (uid: String, n: Double) in JSONValue.object([JSONMember("uid", .string(uid)), JSONMember("n", .number(n))]) }
        let a = try Path("/a")
        let b = try Path("/b")
        #expect(rules.canRead(a, auth: user("u19999", 0), root: .empty, query: nil, now: 0).allowed)
        #expect(rules.canRead(a, auth: user("u0", 0), root: .empty, query: nil, now: 0).allowed)
        #expect(!rules.canRead(a, auth: user("v", 0), root: .empty, query: nil, now: 0).allowed)
        #expect(rules.canRead(b, auth: user("u", -1), root: .empty, query: nil, now: 0).allowed)
        #expect(!rules.canRead(b, auth: user("u", 19_999), root: .empty, query: nil, now: 0).allowed)
        #expect(!rules.canRead(b, auth: user("x", -1), root: .empty, query: nil, now: 0).allowed)
        // Mixed with other operators, precedence holds: && binds tighter than ||.
        let mixed = try RulesDocument.parse(#"{"rules": {".read": "false && false || true && true || false"}}"#)
        #expect(mixed.canRead(.root, auth: .null, root: .empty, query: nil, now: 0).allowed)
        // A non-boolean operand anywhere in a chain is refused at load, as for two operands.
        let error = try #require(Self.error(#"{"rules": {".read": "true || false || 1"}}"#))
        #expect(error.message.contains("Right operand of || must be boolean"), "\(error)")
    }

    @Test func commentsAndMultiLineStringsLoad() throws {
        let text = """
            // Rules for the app.
            {
              /* the whole tree */
              "rules": {
                ".read": "auth != null &&
                          auth.uid == 'admin'", // only the admin
                "users": { "$uid": { ".write": "auth.uid == $uid" } } /* end */
              }
            }
            """
        let rules = try RulesDocument.parse(text)
        #expect(rules.source == text)
        #expect(rules.canRead(.root, auth: RulesHarness.user("admin"), root: .empty, query: nil, now: 0).allowed)
        #expect(!rules.canRead(.root, auth: RulesHarness.user("bob"), root: .empty, query: nil, now: 0).allowed)
    }

    @Test func aByteOrderMarkIsSkipped() throws {
        let rules = try RulesDocument.parse("\u{FEFF}{\"rules\": {\".read\": true}}")
        #expect(rules.canRead(.root, auth: .null, root: .empty, query: nil, now: 0).allowed)
        RulesDocumentLoaderTests.expectError("\u{FEFF}{\"rules\": 1}", at: 1, 11, rulePath: "rules", containing: "got number")
    }

    @Test func theOpenDocumentAllowsEverything() throws {
        let open = RulesDocument.open
        #expect(open.canRead(try Path("/a/b"), auth: .null, root: .empty, query: nil, now: 0).allowed)
        let write = Write.set(try Path("/a"), Node(.number(1)))
        #expect(open.canWrite(write, auth: .null, old: .empty, now: 0).allowed)
        #expect(try RulesDocument.parse(open.source).canRead(.root, auth: .null, root: .empty, query: nil, now: 0).allowed)
    }

    @Test func indexDeclarationsAreListedWithTheirRulesPaths() throws {
        let rules = try RulesDocument.parse(
            #"{"rules": {"scores": {".indexOn": ".value"}, "users": {"$uid": {"posts": {".indexOn": ["date", "meta/likes"]}}}}}"#)
        #expect(
            rules.indexDeclarations == [
                RuleIndexDeclaration(path: ["scores"], on: [".value"]),
                RuleIndexDeclaration(path: ["users", "$uid", "posts"], on: ["date", "meta/likes"]),
            ])
    }

    @Test func theTopLevelMustBeOneRulesObject() {
        RulesDocumentLoaderTests.expectError("[1]", at: 1, 1, rulePath: "", containing: "\"rules\"")
        RulesDocumentLoaderTests.expectError("{}", at: 1, 1, rulePath: "", containing: "no \"rules\"")
        RulesDocumentLoaderTests.expectError(
            "{\"rules\": {},\n  \"otherStuff\": true}", at: 2, 3, rulePath: "", containing: "otherStuff")
        RulesDocumentLoaderTests.expectError("{\"rules\": null}", at: 1, 11, rulePath: "rules", containing: "got null")
        RulesDocumentLoaderTests.expectError("{\"rules\": \"x\"}", at: 1, 11, rulePath: "rules", containing: "got string")
        #expect(RulesDocumentLoaderTests.error(#"{"rules": {}}"#) == nil)
    }

    @Test func ruleValuesMustBeBooleansOrExpressions() {
        RulesDocumentLoaderTests.expectError(
            "{\"rules\": {\n  \"a\": {\".read\": 1}}}", at: 2, 18, rulePath: "rules/a/.read", containing: "got number")
        RulesDocumentLoaderTests.expectError(
            "{\"rules\": {\".validate\": null}}", at: 1, 25, rulePath: "rules/.validate", containing: "got null")
    }

    @Test func indexOnMustBeAStringOrAnArrayOfStrings() {
        RulesDocumentLoaderTests.expectError(
            "{\"rules\": {\".indexOn\": 5}}", at: 1, 24, rulePath: "rules/.indexOn", containing: "got number")
        RulesDocumentLoaderTests.expectError(
            "{\"rules\": {\".indexOn\": [\"a\", true]}}", at: 1, 30, rulePath: "rules/.indexOn", containing: "got boolean")
    }

    @Test func unknownRuleKeysAreRefused() {
        RulesDocumentLoaderTests.expectError(
            "{\"rules\": {\"a\": {\n    \".woops\": true}}}", at: 2, 5, rulePath: "rules/a/.woops", containing: ".woops")
    }

    @Test func childrenMustBeObjectsWithValidKeys() {
        RulesDocumentLoaderTests.expectError("{\"rules\": {\"a\": null}}", at: 1, 17, rulePath: "rules/a", containing: "got null")
        RulesDocumentLoaderTests.expectError("{\"rules\": {\"a\": true}}", at: 1, 17, rulePath: "rules/a", containing: "got boolean")
        RulesDocumentLoaderTests.expectError(
            "{\"rules\": {\"a#b\": {}}}", at: 1, 12, rulePath: "rules/a#b", containing: "Invalid key")
        RulesDocumentLoaderTests.expectError(
            "{\"rules\": {\"a\": {}, \"a\": {}}}", at: 1, 21, rulePath: "rules/a", containing: "Duplicate")
    }

    /// Keys are told apart by their bytes, as the tree tells them: "é" and "e" + U+0301 are
    /// two children with rules of their own, not one key given twice.
    @Test func canonicallyEquivalentKeysAreDistinctChildren() throws {
        let rules = try RulesDocument.parse(#"{"rules": {"\u00e9": {".read": true}, "e\u0301": {".read": false}}}"#)
        #expect(rules.canRead(try Path("\u{e9}"), auth: .null, root: .empty, query: nil, now: 0).allowed)
        #expect(!rules.canRead(try Path("e\u{301}"), auth: .null, root: .empty, query: nil, now: 0).allowed)
    }

    @Test func oneWildcardPerLevelAndNoRepeatedNameOnAChain() {
        RulesDocumentLoaderTests.expectError(
            "{\"rules\": {\"$a\": {}, \"$b\": {}}}", at: 1, 22, rulePath: "rules/$b", containing: "only be one wildchild")
        RulesDocumentLoaderTests.expectError(
            "{\"rules\": {\"$a\": {\n \"$a\": {}}}}", at: 2, 2, rulePath: "rules/$a/$a", containing: "already declared")
        #expect(RulesDocumentLoaderTests.error(#"{"rules": {"x": {"$a": {}}, "y": {"$a": {}}}}"#) == nil)
    }

    @Test func expressionErrorsPointInsideTheString() {
        // `$color` is not declared: the error is at the `$`, column 27 of line 2.
        RulesDocumentLoaderTests.expectError(
            "{\"rules\": {\n  \"a\": {\".read\": \"true && $color == 'red'\"}}}", at: 2, 27, rulePath: "rules/a/.read",
            containing: "$color is undefined")
        // Inside a multi-line string, after its line break.
        RulesDocumentLoaderTests.expectError(
            "{\"rules\": {\".read\": \"auth != null &&\n      skies == 'blue'\"}}", at: 2, 7, rulePath: "rules/.read",
            containing: "skies is undefined")
        // Escapes before the error count as the characters they stand for, not as one.
        RulesDocumentLoaderTests.expectError(
            "{\"rules\": {\".read\": \"'\\u0041' == 'A' && 7\"}}", at: 1, 41, rulePath: "rules/.read", containing: "boolean")
        RulesDocumentLoaderTests.expectError(
            "{\"rules\": {\".read\": \"auth.uid\"}}", at: 1, 22, rulePath: "rules/.read", containing: "must evaluate to a boolean")
        RulesDocumentLoaderTests.expectError(
            "{\"rules\": {\".read\": \"a; b\"}}", at: 1, 25, rulePath: "rules/.read", containing: "single expression")
        RulesDocumentLoaderTests.expectError(
            "{\"rules\": {\".read\": \"true; false\"}}", at: 1, 28, rulePath: "rules/.read", containing: "single expression")
    }

    @Test func syntaxErrorsInTheDocumentHaveTheirPosition() {
        RulesDocumentLoaderTests.expectError("{\"rules\": {\n  \"a\": {\n}", at: 3, 2, rulePath: "", containing: "Unterminated object")
        RulesDocumentLoaderTests.expectError("{\"rules\": {\"a\n", at: 1, 12, rulePath: "", containing: "Unterminated string")
        RulesDocumentLoaderTests.expectError("/* open", at: 1, 1, rulePath: "", containing: "comment")
        RulesDocumentLoaderTests.expectError("{\"rules\": {}} x", at: 1, 15, rulePath: "", containing: "after the end")
        RulesDocumentLoaderTests.expectError("{\"rules\": {\"a\": tru}}", at: 1, 17, rulePath: "", containing: "true")
        RulesDocumentLoaderTests.expectError("{\"rules\": {\"a\" {}}}", at: 1, 16, rulePath: "", containing: "':'")
    }

    @Test func descriptionNamesTheRuleAndPlace() {
        let error = RulesError(message: "x is undefined", rulePath: "rules/users/$uid/.write", line: 4, column: 18)
        #expect(error.description == "rules/users/$uid/.write (line 4, column 18): x is undefined")
    }
}
