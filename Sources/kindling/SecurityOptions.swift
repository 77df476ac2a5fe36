import ArgumentParser
import Foundation
import KindlingCore
import KindlingServer

/// `kindling serve`'s security flags: the rules, how credentials are verified, and whether the
/// server runs in emulator mode.
struct SecurityOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Security rules file (Firebase's JSON form, comments allowed) for every namespace without rules of its own.",
            discussion: "Re-read on SIGHUP and when the file changes; an edit that does not load is logged and the rules in force stay."
        ))
    var rules: String?

    @Option(name: .customLong("jwt-secret"), help: "HS256 secret that signs ID tokens (repeatable; or KINDLING_JWT_SECRET).")
    var jwtSecrets: [String] = []

    @Option(name: .customLong("jwt-public-key"), help: "PEM file of an RS256/ES256 public key or certificate that signs ID tokens (repeatable).")
    var publicKeyFiles: [String] = []

    @Option(name: .customLong("jwks"), help: "JWKS file of the keys that sign ID tokens (repeatable), e.g. Firebase Auth's.")
    var jwksFiles: [String] = []

    @Option(name: .customLong("firebase-project"), help: "Firebase project id: ID tokens must come from its issuer and name it as audience.")
    var firebaseProject: String?

    @Option(
        name: .customLong("admin-secret"),
        help: "Admin credential that bypasses rules (REST auth= or Bearer, realtime auth); or KINDLING_ADMIN_SECRET.")
    var adminSecrets: [String] = []

    @Flag(name: .customLong("allow-open"), help: "Serve without rules or credential checks even on an address other machines can reach.")
    var allowOpen = false

    @Flag(name: .customLong("rules-debug"), help: "Log, for every denied request, each rule evaluated and its value.")
    var rulesDebug = false

    @Flag(
        name: .customLong("rules-coverage"), inversion: .prefixedNo,
        help: ArgumentHelp(
            "Record which rule expressions requests evaluate and what they returned, for GET /.inspect/coverage?ns=NAME.",
            discussion:
                "Default: on in emulator mode, as the Firebase emulator always records it; off otherwise, where rules are then evaluated without it."
        ))
    var rulesCoverage: Bool?

    /// Whether the server records rules coverage: as asked, else in emulator mode only.
    func recordsCoverage(_ auth: AuthSettings) -> Bool { rulesCoverage ?? auth.emulatorMode }

    /// The credential settings. Emulator mode (`owner` is an admin, unsigned tokens are accepted)
    /// is on while the server listens on loopback and no key or secret is configured.
    func authSettings(host: String) throws -> AuthSettings {
        var settings = AuthSettings()
        let environment = ProcessInfo.processInfo.environment
        settings.hmacSecrets = jwtSecrets + [environment["KINDLING_JWT_SECRET"]].compactMap { $0 }.filter { !$0.isEmpty }
        settings.adminSecrets = adminSecrets + [environment["KINDLING_ADMIN_SECRET"]].compactMap { $0 }.filter { !$0.isEmpty }
        settings.publicKeyPEMs = try publicKeyFiles.map(SecurityOptions.read)
        settings.jwks = try jwksFiles.map(SecurityOptions.read)
        settings.firebaseProjectID = firebaseProject
        let configured = !settings.hmacSecrets.isEmpty || !settings.publicKeyPEMs.isEmpty || !settings.jwks.isEmpty || !settings.adminSecrets.isEmpty
        settings.emulatorMode = ProtectedMode.isLoopback(host) && !configured
        return settings
    }

    /// The rules file, loaded; nil without `--rules`.
    func loadRules() throws -> RulesDocument? {
        guard let rules else { return nil }
        let text = try SecurityOptions.read(rules)
        do throws(RulesError) {
            return try RulesDocument.parse(text)
        } catch {
            throw ValidationError("\(rules): \(error)")
        }
    }

    static func read(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else { throw ValidationError("Cannot read \(path).") }
        return String(decoding: data, as: UTF8.self)
    }
}
