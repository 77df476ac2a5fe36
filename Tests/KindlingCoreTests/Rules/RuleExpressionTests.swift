import Testing

@testable import KindlingCore

/// Operator and method semantics at run time (rules spec §7, §9.2), each as a `.read` rule at
/// the root that must come out true.
struct RuleExpressionTests {
    static func holds(_ expression: String, auth: JSONValue = .null) throws -> Bool {
        let text = JSONWriter.string(.object([JSONMember("rules", .object([JSONMember(".read", .string(expression))]))]))
        return try RulesDocument.parse(text).canRead(.root, auth: auth, root: .empty, query: nil, now: 42).allowed
    }

    @Test(arguments: [
        "1e21 + '' == '1e+21'", "0.1 + 0.2 + '' == '0.30000000000000004'", "-0 + '' == '0'", "1/0 + '' == 'NaN'",
        "0.000001 + '' == '0.000001'", "1e-7 + '' == '1e-7'", "'a' + 1.5 == 'a1.5'", "-1 % 3 == -1", "5.5 % 2 == 1.5",
        "'b' > 'a'", "'a' < 'ab'", "'😀' < '\\uffff'", "'😀'.length == 2", "'aaa'.replace('a', 'b') == 'bbb'",
        "'a.b'.replace('.', '') == 'ab'", "!(1/0 == 1/0)", "now == 42", "'x'.contains('')", "'abc'.beginsWith('')",
        "'ÉCOLE'.toLowerCase() == 'école'", "'é' != 'e\\u0301'", "(true ? 'a' : 1) == 'a'", "-(2) * 3 == -6", "2 - 1 - 1 == 0",
        "1 + 2 * 3 == 7", "(1 + 2) * 3 == 9", "8 / 2 / 2 == 2", "true || false && false", "!false == true",
        "auth.token.identities['google.com'][0] == 'g1'", "auth.token.list.length == 1", "auth.token['sub'] == 'u'",
        "auth.uid == 'u' && auth.missing == null && auth.missing.deeper == null",
        "auth.token.list['0'] == 1 && auth.token.list[0] == 1", "auth.token.list['00'] == null", "auth.token.list['+0'] == null",
        "auth.token.list['-0'] == null", "auth.token.list[' 0'] == null", "auth.token.list['0.0'] == null",
    ])
    func holdsAtRunTime(_ expression: String) throws {
        let auth = try JSONParser.parse(#"{"uid": "u", "token": {"sub": "u", "identities": {"google.com": ["g1"]}, "list": [1]}}"#)
        #expect(try RuleExpressionTests.holds(expression, auth: auth))
    }

    /// Chained replacements and concatenations cannot grow a string past what the tree stores:
    /// past that the rule fails at once (it is false) instead of allocating gigabytes.
    @Test func stringsCannotGrowWithoutBound() throws {
        let grow = "auth.uid" + String(repeating: ".replace('a', 'aaaaaaaaaa')", count: 8) + ".length > 0"
        let auth = JSONValue.object([JSONMember("uid", .string(String(repeating: "a", count: 100)))])
        #expect(try !RuleExpressionTests.holds(grow, auth: auth))
        #expect(try RuleExpressionTests.holds("auth.uid.replace('a', 'aa').length == 200", auth: auth))
        let big = JSONValue.object([JSONMember("uid", .string(String(repeating: "a", count: Node.maxStringBytes / 2 + 1)))])
        #expect(try !RuleExpressionTests.holds("(auth.uid + auth.uid).length > 0", auth: big))
    }

    @Test(arguments: [
        "auth.uid + 1 == 'x'", "root.val() < 1", "'a' < auth.uid", "auth.uid.length > 0", "root.child(auth.x).exists()", "-auth.uid == 1",
        "root.val().contains('x')", "auth.x.toLowerCase() == 'x'", "root.parent().exists()", "1 + auth.flag == 2",
    ])
    func failsAtRunTime(_ expression: String) throws {
        let document = try RulesDocument.parse(
            JSONWriter.string(.object([JSONMember("rules", .object([JSONMember(".read", .string(expression))]))])))
        let decision = document.canRead(.root, auth: .null, root: .empty, query: nil, now: 0, explain: true)
        #expect(!decision.allowed)
        #expect(decision.trace.first?.contains("=> error:") == true, "\(decision.trace)")
    }

    @Test(arguments: [
        "auth.uid && true", "!auth.uid", "root", "root.child", "root.exists", "root.child('a', 'b').exists()", "root.child(1).exists()",
        "root.hasChildren([])", "root.hasChildren(['a', 1])", "root == root", "query == null", "1 < 'a'", "true < false",
        "root.val().foo == 1", "'a'.notAMethod()", "1 + true == 1", "-'a' == 1", "[1] == 1", "/a/ == 1", "typeof auth == 'x'",
        "auth = 1", "a ? true : false", "auth.uid ? true : false", "true ? root : 1", "root.val().matches('x')",
        "'a'.matches(/a/g)", "1 ** 2 == 1", "+1 == 1", "auth.uid++", "{}", "", "   ", "true;;", "auth.x[$nope] == 1",
        "root[$w]()", "'a'.length()", "now()",
    ])
    func refusedWhenTheRulesLoad(_ expression: String) {
        let text = JSONWriter.string(.object([JSONMember("rules", .object([JSONMember(".read", .string(expression))]))]))
        #expect(throws: RulesError.self) { try RulesDocument.parse(text) }
    }
}
