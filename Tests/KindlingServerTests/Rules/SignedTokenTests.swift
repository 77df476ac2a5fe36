import Crypto
import Foundation
import KindlingCore
import KindlingServer
import KindlingTesting
import Logging
import Testing

/// A server that verifies tokens (HS256 secret, admin secret, not emulator mode), over the
/// realtime protocol: what a signed, a forged, an expired and an expiring token get.
@Suite(.timeLimit(.minutes(2)))
struct SignedTokenTests {
    static let secret = "a-secret-of-at-least-thirty-two-bytes!"
    static let adminSecret = "admin-secret-0123456789"

    static func base64URL(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// An HS256 token for `uid`, valid from `issuedAt` until `expires` (Unix seconds).
    static func token(_ uid: String, issuedAt: Int, expires: Int, key: String = secret) -> String {
        let header = base64URL(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let payload = base64URL(Array(#"{"sub":"\#(uid)","iat":\#(issuedAt),"exp":\#(expires)}"#.utf8))
        let signature = HMAC<SHA256>.authenticationCode(for: Array("\(header).\(payload)".utf8), using: SymmetricKey(data: Array(key.utf8)))
        return "\(header).\(payload).\(base64URL(signature))"
    }

    static var now: Int { Int(Date().timeIntervalSince1970) }

    static func withServer(_ body: (KindlingServer) async throws -> Void) async throws {
        try await KindlingTesting.withServer(
            { configuration in
                var auth = AuthSettings()
                auth.hmacSecrets = [secret]
                auth.adminSecrets = [adminSecret]
                auth.clockSkew = .seconds(0)
                configuration.auth = auth
                configuration.rules = try RulesDocument.parse(
                    #"{"rules":{"notes":{"$uid":{".read":"auth.uid === $uid",".write":"auth.uid === $uid"}}}}"#)
            }, body)
    }

    static func status(_ reply: [JSONValue]) -> String? { reply.last?["d"]?["b"]?["s"]?.stringValue }
    static func auth(_ credential: String, action: String = "auth") -> (String, JSONValue) {
        (action, .object([JSONMember("cred", .string(credential))]))
    }

    @Test func onlyVerifiedCredentialsCount() async throws {
        try await Self.withServer { server in
            let client = try await TestClient.connect(port: server.port, namespace: "signed")
            defer { Task { await client.close() } }
            let good = try await client.request(
                "auth", .object([JSONMember("cred", .string(Self.token("alice", issuedAt: Self.now, expires: Self.now + 3600)))]))
            #expect(Self.status(good) == "ok")
            #expect(good.last?["d"]?["b"]?["d"]?["auth"]?["uid"]?.stringValue == "alice")
            for (credential, action, expected) in [
                (
                    Self.token("mallory", issuedAt: Self.now, expires: Self.now + 3600, key: "another-secret-of-thirty-two-bytes!!"), "auth",
                    "invalid_token"
                ),
                (Self.token("alice", issuedAt: Self.now - 7200, expires: Self.now - 3600), "auth", "expired_token"),
                ("owner", "gauth", "invalid_token"),
                ("eyJhbGciOiJub25lIiwidHlwZSI6IkpXVCJ9.eyJzdWIiOiJldmUiLCJpYXQiOjB9.", "auth", "invalid_token"),
                ("ya29.some-google-access-token", "gauth", "invalid_token"),
                (Self.adminSecret, "gauth", "ok"),
            ] {
                let reply = try await client.request(action, .object([JSONMember("cred", .string(credential))]))
                #expect(Self.status(reply) == expected, "\(action) \(credential.prefix(24))…")
            }
            // REST: the same rules for ?auth= and Bearer.
            let alice = Self.token("alice", issuedAt: Self.now, expires: Self.now + 3600)
            let write = try await TestHTTPConnection.request(port: server.port, "PUT", "/notes/alice.json?ns=signed&auth=\(alice)", body: #""hi""#)
            #expect(write.status == 200)
            let owner = try await TestHTTPConnection.request(
                port: server.port, "GET", "/notes/alice.json?ns=signed", headers: [("Authorization", "Bearer owner")])
            #expect(owner.status == 401)
            let admin = try await TestHTTPConnection.request(
                port: server.port, "GET", "/notes/alice.json?ns=signed", headers: [("Authorization", "Bearer \(Self.adminSecret)")])
            #expect(admin.status == 200 && admin.text == #""hi""#)
        }
    }

    @Test func anExpiringTokenRevokesAuthAndTheListensItGranted() async throws {
        try await Self.withServer { server in
            let client = try await TestClient.connect(port: server.port, namespace: "signed")
            defer { Task { await client.close() } }
            // Long enough for the auth and the listen to be taken before it expires on a loaded
            // machine (a 2 s token, whole seconds, could expire between them: a CI run did).
            let expiring = Self.token("alice", issuedAt: Self.now, expires: Self.now + 6)
            #expect(Self.status(try await client.request("auth", .object([JSONMember("cred", .string(expiring))]))) == "ok")
            #expect(
                Self.status(try await client.request("q", .object([JSONMember("p", .string("/notes/alice")), JSONMember("h", .string(""))]))) == "ok")
            var seen: [String] = []
            let deadline = ContinuousClock.now + .seconds(16)
            while seen.count < 2, ContinuousClock.now < deadline {
                let message = try await client.nextMessage(timeout: .seconds(10))
                if let action = message["d"]?["a"]?.stringValue, action == "ac" || action == "c" {
                    seen.append(action + ":" + (message["d"]?["b"]?["s"]?.stringValue ?? message["d"]?["b"]?["p"]?.stringValue ?? ""))
                }
            }
            #expect(seen == ["ac:expired_token", "c:notes/alice"])
            let write = try await client.request("p", .object([JSONMember("p", .string("/notes/alice")), JSONMember("d", .number(1))]))
            #expect(Self.status(write) == "permission_denied")
        }
    }
}
