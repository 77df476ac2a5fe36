import Testing

@testable import KindlingCore

/// The rules unit-test file format and its runner.
struct RulesTestSuiteTests {
    static let rulesFile = """
        // The app's rules.
        {"rules": {"users": {"$uid": {".read": "auth != null && auth.uid == $uid", ".write": "auth != null && auth.uid == $uid",
          "name": {".validate": "newData.isString()"}, "created": {".validate": "newData.val() == now"}}},
          "feed": {".read": "query.orderByKey && query.limitToFirst <= 50"}}}
        """

    static let suite = """
        {"rules": "app.rules.json",
         "cases": [
           {"name": "alice reads her data", "auth": {"uid": "alice"}, "op": "read", "path": "/users/alice", "expect": "allow"},
           {"name": "bob cannot", "auth": {"uid": "bob"}, "op": "read", "path": "/users/alice", "expect": "deny"},
           {"name": "alice sets a name", "auth": {"uid": "alice"}, "op": "set", "path": "/users/alice/name", "value": "Alice",
            "expect": "allow"},
           {"name": "a number is no name", "auth": {"uid": "alice"}, "op": "update", "path": "/users/alice",
            "value": {"name": 5}, "data": {"users": {"alice": {"name": "A"}}}, "expect": "deny"},
           {"name": "created is stamped", "auth": {"uid": "alice"}, "op": "set", "path": "/users/alice/created",
            "value": {".sv": "timestamp"}, "now": 1234, "expect": "allow"},
           {"name": "anonymous removal", "auth": null, "op": "remove", "path": "/users/alice", "expect": "deny"},
           {"name": "small feed page", "op": "read", "path": "/feed", "query": {"orderBy": "\\"$key\\"", "limitToFirst": 10},
            "expect": "allow"},
           {"name": "WRONG: big feed page", "op": "read", "path": "/feed", "query": {"orderBy": "\\"$key\\"", "limitToFirst": 100},
            "expect": "allow"}
         ]}
        """

    @Test func aSuiteRunsEveryCaseAndExplainsTheFailures() throws {
        let suite = try RulesTestSuite.parse(RulesTestSuiteTests.suite) { $0 == "app.rules.json" ? RulesTestSuiteTests.rulesFile : nil }
        let results = suite.run()
        #expect(results.count == 8)
        #expect(results.filter { !$0.passed }.map(\.name) == ["WRONG: big feed page"])
        let failed = try #require(results.last)
        #expect(failed.trace == [#"/feed: .read "query.orderByKey && query.limitToFirst <= 50" => false"#, "No .read rule allowed the operation."])
        #expect(results.dropLast().allSatisfy { $0.trace.isEmpty })
        #expect(suite.run(explain: true).allSatisfy { !$0.trace.isEmpty })
    }

    @Test func inlineRulesAndInvalidWritesAreReported() throws {
        let suite = try RulesTestSuite.parse(
            """
            {"rules": {"rules": {".write": true}},
             "cases": [{"name": "bad key", "op": "set", "path": "/a", "value": {"b.c": 1}, "expect": "allow"},
                       {"name": "empty update", "op": "update", "path": "/a", "value": {}, "expect": "allow"}]}
            """
        ) { _ in nil }
        let results = suite.run()
        #expect(results.map(\.passed) == [false, true])
        #expect(results[0].error?.contains("Invalid key") == true)
    }

    @Test func badFilesAreRefusedWithAReason() {
        func refusal(_ text: String) -> String? {
            do {
                _ = try RulesTestSuite.parse(text) { _ in nil }
                return nil
            } catch {
                return error.message
            }
        }
        #expect(refusal("{")?.contains("not valid JSON") == true)
        #expect(refusal(#"{"rules": "missing.json", "cases": []}"#)?.contains("Cannot read the rules file missing.json") == true)
        #expect(refusal(#"{"rules": {"rules": {".read": 1}}, "cases": []}"#)?.contains("rules/.read") == true)
        #expect(refusal(#"{"rules": {"rules": {}}}"#)?.contains("\"cases\"") == true)
        #expect(
            refusal(#"{"rules": {"rules": {}}, "cases": [{"name": "x", "op": "peek", "path": "/", "expect": "allow"}]}"#)?.contains("\"op\"") == true)
        #expect(
            refusal(#"{"rules": {"rules": {}}, "cases": [{"name": "x", "op": "read", "path": "/", "expect": "maybe"}]}"#)?.contains("\"expect\"")
                == true)
        #expect(
            refusal(#"{"rules": {"rules": {}}, "cases": [{"name": "x", "op": "read", "path": "/a#b", "expect": "deny"}]}"#)?.contains("Case \"x\"")
                == true)
        #expect(
            refusal(#"{"rules": {"rules": {}}, "cases": [{"name": "x", "op": "read", "path": "/", "now": -1, "expect": "deny"}]}"#)?.contains(
                "\"now\"") == true)
    }
}
