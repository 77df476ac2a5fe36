/// The rule that keeps a server reachable from other machines from starting unprotected: off
/// loopback it needs security rules and a way to verify credentials (a token key or an admin
/// secret), and never runs in emulator mode, unless the operator opts out with `--allow-open`.
public enum ProtectedMode {
    /// Why the server refuses to start, naming the flags that would fix it.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// True for addresses only this machine can reach.
    public static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return bare == "localhost" || bare == "::1" || bare.hasPrefix("127.")
    }

    static func check(_ configuration: ServerConfiguration) throws(Refusal) {
        guard !isLoopback(configuration.host), !configuration.allowOpen else { return }
        var missing: [String] = []
        if configuration.rules == nil { missing.append("security rules (--rules FILE)") }
        let auth = configuration.auth
        if auth.hmacSecrets.isEmpty, auth.publicKeyPEMs.isEmpty, auth.jwks.isEmpty, auth.adminSecrets.isEmpty {
            missing.append("a way to verify credentials (--jwt-secret, --jwt-public-key FILE, --jwks FILE or --admin-secret)")
        }
        if auth.emulatorMode { missing.append("emulator mode off (it accepts unsigned tokens and `owner`)") }
        guard missing.isEmpty else {
            throw Refusal(
                description: "Refusing to serve \(configuration.host), which other machines can reach, without "
                    + missing.joined(separator: " and ") + ". Add them, or pass --allow-open to serve it unprotected anyway.")
        }
    }
}
