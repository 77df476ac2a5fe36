import KindlingCore
import KindlingServer
import KindlingTesting
import Logging
import Testing

/// `POST /.settings/rules/simulate.json`: one read or write tried against the rules as a chosen
/// `auth`, answered with the decision and the rule that made it; admin only; nothing changes.
@Suite(.timeLimit(.minutes(1)))
struct RulesSimulationTests {
    static let rules = """
        {
          "rules": {
            "users": {
              "$uid": {
                ".read": "auth != null && auth.uid == $uid",
                ".write": "auth != null && auth.uid == $uid",
                ".validate": "newData.hasChildren(['name'])"
              }
            }
          }
        }
        """
    static let admin = [("Authorization", "Bearer owner")]

    static func withServer(_ body: (KindlingServer, TestHTTPConnection) async throws -> Void) async throws {
        try await KindlingTesting.withServer(label: "rules-simulation-tests") { server in
            let http = try await TestHTTPConnection.connect(port: server.port)
            defer { http.close() }
            #expect(try await http.request("PUT", "/.settings/rules.json", headers: admin, body: rules).status == 200)
            #expect(try await http.request("PUT", "/users/alice.json", headers: admin, body: #"{"name":"Alice"}"#).status == 200)
            try await body(server, http)
        }
    }

    static func simulate(_ http: TestHTTPConnection, _ body: String, headers: [(String, String)] = admin) async throws -> TestHTTPResponse {
        try await http.request("POST", "/.settings/rules/simulate.json", headers: headers, body: body)
    }

    @Test func aReadIsDecidedByTheRuleOnItsPath() async throws {
        try await Self.withServer { _, http in
            let allowed = try await Self.simulate(http, #"{"path":"/users/alice","op":"read","auth":{"uid":"alice"}}"#)
            #expect(allowed.status == 200)
            let json = try allowed.json()
            #expect(json["allowed"] == .bool(true))
            guard case .array(let lines)? = json["explanation"] else { Issue.record("no explanation"); return }
            #expect(lines.contains { $0 == .string(#"/users/alice: .read "auth != null && auth.uid == $uid" => true"#) })
            let denied = try await Self.simulate(http, #"{"path":"/users/alice","op":"read","auth":null}"#)
            #expect(try denied.json()["allowed"] == .bool(false))
        }
    }

    @Test func aWriteIsValidatedAndNothingIsWritten() async throws {
        try await Self.withServer { _, http in
            let invalid = try await Self.simulate(http, #"{"path":"/users/bob","op":"write","data":{"age":3},"auth":{"uid":"bob"}}"#)
            #expect(try invalid.json()["allowed"] == .bool(false))
            let valid = try await Self.simulate(http, #"{"path":"/users/bob","op":"write","data":{"name":"Bob"},"auth":{"uid":"bob"}}"#)
            #expect(try valid.json()["allowed"] == .bool(true))
            #expect(try await http.request("GET", "/users/bob.json", headers: Self.admin).text == "null")
        }
    }

    @Test func draftRulesAreTriedAndTheirErrorsGiveTheLine() async throws {
        try await Self.withServer { _, http in
            let open = try await Self.simulate(http, #"{"path":"/x","op":"read","auth":null,"rules":"{\"rules\":{\".read\":true}}"}"#)
            #expect(try open.json()["allowed"] == .bool(true))
            let broken = try await Self.simulate(http, #"{"path":"/x","op":"read","auth":null,"rules":"{\"rules\":{\n\".read\": \"auth ==\"}}"}"#)
            #expect(broken.status == 400)
            #expect(broken.text.contains("line 2"))
        }
    }

    @Test func onlyAnAdminMaySimulateAndBadInputIsRefused() async throws {
        try await Self.withServer { _, http in
            let anonymous = try await Self.simulate(http, #"{"path":"/users/alice","op":"read","auth":null}"#, headers: [])
            #expect(anonymous.status == 401)
            // A draft is loaded only for an admin: an anonymous caller's broken draft is refused
            // for who it is, not compiled.
            let anonymousDraft = try await Self.simulate(
                http, #"{"path":"/a","op":"read","auth":null,"rules":"{\"rules\": {\".read\": nonsense("}"#, headers: [])
            #expect(anonymousDraft.status == 401)
            #expect(try await Self.simulate(http, #"{"path":"/a","op":"delete","auth":null}"#).status == 400)
            #expect(try await Self.simulate(http, #"{"op":"read"}"#).status == 400)
            #expect(try await Self.simulate(http, #"{"path":"/a","op":"read","auth":7}"#).status == 400)
            #expect(try await Self.simulate(http, #"{"path":"/a/.bad[","op":"read","auth":null}"#).status == 400)
            #expect(try await http.request("GET", "/.settings/rules/simulate.json", headers: Self.admin).status == 405)
        }
    }
}
