import CryptoExtras
import Foundation
import KindlingCore
import KindlingTesting
import Testing

/// `kindling migrate --from-credential`: a service account's key traded for OAuth tokens at a
/// token endpoint (a fake of Google's, giving tokens the source Kindling verifies), renewed as
/// they run out, and the source's change stream opened again each time the source revokes it.
extension MigrateCommandTests {
    static let jwtSecret = "migration-test-jwt-secret-0123456789abcdef"
    static let adminSecret = "migration-admin-secret-0123456789"
    static let email = "migrator@my-app.iam.gserviceaccount.com"

    /// The service account's key: the test run's RSA key.
    static var accountKey: _RSA.Signing.PrivateKey { TestTokens.rsaKey }

    /// A token endpoint whose tokens last `lifetime` seconds at the source. The source allows a
    /// minute of clock skew past `exp` (and revokes its stream then), so `exp` is set a minute
    /// before the end of the lifetime the endpoint states.
    static func tokenEndpoint(lifetime: Int) async throws -> FakeTokenEndpoint {
        try await FakeTokenEndpoint.start(
            .init(email: email, publicKey: accountKey.publicKey, lifetimeSeconds: lifetime) {
                let exp = Int(Date().timeIntervalSince1970) + lifetime - 60
                return TestTokens.hs256Raw(
                    header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"sub":"migrator","exp":\#(exp)}"#, secret: jwtSecret)
            })
    }

    /// The key file the Firebase console downloads, naming `endpoint` as its token URI.
    static func keyFile(in directory: String, endpoint: FakeTokenEndpoint) throws -> String {
        let document = JSONValue.object([
            JSONMember("type", "service_account"), JSONMember("project_id", "my-app"), JSONMember("private_key_id", "key-1"),
            JSONMember("private_key", .string(accountKey.pkcs8PEMRepresentation)), JSONMember("client_email", .string(email)),
            JSONMember("token_uri", .string(endpoint.url)),
        ])
        let path = directory + "/service-account.json"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try JSONWriter.string(document).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A source that reads only to the token endpoint's user (and the admin), and lets anyone
    /// write, so the test's writer needs no credential.
    static func secureSource(in directory: String) throws -> [String] {
        let rules = directory + "/rules.json"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try #"{"rules":{".read":"auth != null && auth.uid == 'migrator'",".write":true}}"#.write(toFile: rules, atomically: true, encoding: .utf8)
        return ["--jwt-secret", jwtSecret, "--admin-secret", adminSecret, "--rules", rules]
    }

    static func readAsAdmin(_ server: ServerProcess, _ path: String) async throws -> String {
        try await TestHTTPConnection.request(
            port: server.port, "GET", "/\(path).json?ns=app", headers: [("Authorization", "Bearer \(adminSecret)")]
        ).text
    }

    @Test func aServiceAccountsTokensAreRenewedAndTheStreamFollowedOnAfterEachExpires() async throws {
        let directory = NSTemporaryDirectory() + "kindling-migrate-account-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Twenty seconds: the stream's token lapses every twenty seconds while the writer
        // writes. Longer than `--until-idle`: each stream opened again restarts the quiet time
        // (its first data may hold changes no event told), so the source must be able to stay
        // quiet that long between two lapses. `--until-idle` is 15 s, not less: a writer held
        // back that long makes the source quiet indeed (the full suite beside two busy loops
        // once held it back 8 s, the bound before).
        let endpoint = try await Self.tokenEndpoint(lifetime: 20)
        defer { Task { await endpoint.stop() } }
        let key = try Self.keyFile(in: directory, endpoint: endpoint)
        try await Self.withServers(sourceArguments: try Self.secureSource(in: directory)) { source, target in
            let seed = (0..<200).map { #""u\#($0)":{"name":"user \#($0)","n":\#($0)}"# }.joined(separator: ",")
            #expect(try await TestHTTPConnection.request(port: source.port, "PUT", "/users.json?ns=app", body: "{\(seed)}").status == 200)
            // Without a credential the source refuses the read that the migration makes.
            #expect(try await TestHTTPConnection.request(port: source.port, "GET", "/users.json?ns=app").status == 401)
            let migration = try await Self.migrate(source, target, ["--from-credential", key, "--until-idle", "15", "--chunk-kb", "1"])
            let reopened = { migration.errorOutput.components(separatedBy: "written over the target's").count - 1 }
            // The writer goes on until the stream was opened again twice, and a while after.
            let deadline = ContinuousClock.now + .seconds(180)
            var index = 0
            var afterwards = 0
            // The longest time between two of the writer's changes: a machine loaded enough to
            // hold the writer back for `--until-idle` makes the source really quiet.
            var longestGap: Duration = .zero
            var lastChange = ContinuousClock.now
            while afterwards < 30 {
                #expect(try await TestHTTPConnection.request(port: source.port, "PUT", "/live/k\(index).json?ns=app", body: "\(index)").status == 200)
                let patch = try await TestHTTPConnection.request(
                    port: source.port, "PATCH", "/users/u\(index % 200).json?ns=app", body: #"{"n":-\#(index)}"#)
                #expect(patch.status == 200)
                if index % 10 == 0 { _ = try await TestHTTPConnection.request(port: source.port, "DELETE", "/live/k\(index / 2).json?ns=app") }
                index += 1
                longestGap = max(longestGap, ContinuousClock.now - lastChange)
                lastChange = ContinuousClock.now
                if reopened() >= 2 { afterwards += 1 }
                guard migration.isRunning, ContinuousClock.now < deadline else {
                    Issue.record(
                        "the migration ended, or did not follow two expiries within 180 s (the writer's longest gap \(longestGap)): \(migration.errorOutput)"
                    )
                    await migration.kill()
                    return
                }
            }
            guard try await Self.cutsOverWhenQuiet(migration, within: .seconds(120)) else { return }
            #expect(try await Self.readAsAdmin(source, "") == (try await Self.read(target, "")))
            // One token for each expiry at least, and every grant was a valid one.
            #expect(endpoint.issued >= 3, "\(endpoint.issued) tokens")
            #expect(endpoint.refusals.isEmpty, "\(endpoint.refusals)")
        }
    }

    @Test func aServiceAccountTheTokenEndpointRefusesIsAClearError() async throws {
        let directory = NSTemporaryDirectory() + "kindling-migrate-refused-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let endpoint = try await Self.tokenEndpoint(lifetime: 3600)
        defer { Task { await endpoint.stop() } }
        endpoint.refuseFromNowOn()
        let key = try Self.keyFile(in: directory, endpoint: endpoint)
        try await Self.withServers(sourceArguments: try Self.secureSource(in: directory)) { source, target in
            let arguments = [
                "migrate", "--from", "http://127.0.0.1:\(source.port)?ns=app", "--url", "http://127.0.0.1:\(target.port)", "--ns", "app",
                "--until-idle", "1",
            ]
            let refused = try await ChildProcess.run(ServerProcess.binary, arguments: arguments + ["--from-credential", key])
            #expect(refused.ending == .exited(1), "\(refused.errors)")
            #expect(
                refused.errors.contains("error: the token endpoint \(endpoint.url) answered 400: invalid_grant: Invalid JWT Signature."),
                "\(refused.errors)")
            let missing = try await ChildProcess.run(ServerProcess.binary, arguments: arguments + ["--from-credential", directory + "/none.json"])
            #expect(missing.ending == .exited(64))
            #expect(missing.errors.contains("--from-credential: cannot read \(directory)/none.json"), "\(missing.errors)")
            let both = try await ChildProcess.run(ServerProcess.binary, arguments: arguments + ["--from-credential", key, "--from-auth", "x"])
            #expect(both.ending == .exited(64))
            #expect(both.errors.contains("Give --from-auth or --from-credential, not both."), "\(both.errors)")
        }
    }
}
