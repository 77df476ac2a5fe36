import Testing

@testable import KindlingCore

/// The explain traces: one line per rule run, then why.
struct RulesExplainTests {
    static let rules = """
        {"rules": {".read": false, "users": {"$uid": {".write": "auth != null && auth.uid == $uid",
          "age": {".validate": "newData.isNumber() && newData.val() < 150"}}}}}
        """

    @Test func anAllowedWriteListsEveryRuleRunAndSaysItWasAllowed() throws {
        var harness = try RulesHarness(RulesExplainTests.rules)
        let decision = try harness.set("/users/alice", #"{"age": 30}"#, as: RulesHarness.user("alice"), explain: true)
        #expect(decision.allowed)
        #expect(
            decision.trace == [
                #"/users/alice: .write "auth != null && auth.uid == $uid" => true"#,
                #"/users/alice/age: .validate "newData.isNumber() && newData.val() < 150" => true"#,
                "Write was allowed.",
            ])
    }

    @Test func aDeniedReadListsTheRulesThatFailedAndWhy() throws {
        let harness = try RulesHarness(RulesExplainTests.rules)
        let decision = try harness.read("/users/alice", explain: true)
        #expect(!decision.allowed)
        #expect(decision.trace == [#"/: .read "false" => false"#, "No .read rule allowed the operation."])
    }

    @Test func aFailedValidationAndARuntimeErrorAreNamed() throws {
        var harness = try RulesHarness(RulesExplainTests.rules)
        let invalid = try harness.set("/users/alice/age", "200", as: RulesHarness.user("alice"), explain: true)
        #expect(!invalid.allowed)
        #expect(invalid.trace.last == #"Validation failed: /users/alice/age: .validate "newData.isNumber() && newData.val() < 150" => false."#)
        let anonymous = try harness.set("/users/alice/age", "20", explain: true)
        #expect(anonymous.trace.last == "No .write rule allowed the operation.")
        let error = try RulesHarness(#"{"rules": {".read": "auth.uid.length > 0"}}"#).read("/", explain: true)
        #expect(error.trace.first == #"/: .read "auth.uid.length > 0" => error: > needs two numbers or two strings, got null and number"#)
    }

    @Test func withoutExplainThereIsNoTrace() throws {
        let harness = try RulesHarness(RulesExplainTests.rules)
        #expect(try harness.read("/users/alice").trace.isEmpty)
    }
}
