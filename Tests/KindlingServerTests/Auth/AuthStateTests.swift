import KindlingCore
import Testing

@testable import KindlingServer

@Suite("AuthState")
struct AuthStateTests {
    @Test func overrideObjectIsExactlyTheRulesAuth() throws {
        let override = try JSONParser.parse(#"{"uid":"u1","role":"editor","nested":{"a":1}}"#)
        guard case .user(let user) = AuthState.overridden(by: override) else {
            Issue.record("not a user")
            return
        }
        #expect(user.uid == "u1")
        #expect(user.ruleValue == override)
        #expect(user.expiresAt == nil)
        #expect(AuthState.overridden(by: override).expiry == .null)
    }

    @Test func overrideWithoutUidHasAnEmptyUid() throws {
        guard case .user(let user) = AuthState.overridden(by: try JSONParser.parse(#"{"role":"x"}"#)) else {
            Issue.record("not a user")
            return
        }
        #expect(user.uid == "")
    }

    @Test func nullAndOtherValuesOverrideToAnonymous() {
        #expect(AuthState.overridden(by: .null) == .anonymous)
        #expect(AuthState.overridden(by: .string("u1")) == .anonymous)
        #expect(AuthState.overridden(by: .array([])) == .anonymous)
    }

    @Test func onlyObjectsAndNullAreOverrides() {
        #expect(AuthState.isOverride(.object([])) && AuthState.isOverride(.null))
        for other: JSONValue in ["u1", 5, true, .array([])] { #expect(!AuthState.isOverride(other), "\(other)") }
    }

    @Test func ruleValues() {
        #expect(AuthState.anonymous.ruleValue == .null)
        #expect(AuthState.admin.ruleValue["uid"] == .string("owner"))
        #expect(AuthState.anonymous.expiry == .null)
        #expect(AuthState.admin.expiresAt == nil)
    }
}
