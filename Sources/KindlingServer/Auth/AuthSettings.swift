/// How the server checks the credentials clients present (WebSocket `auth`/`gauth`, REST
/// `?auth=`, `?access_token=`, `Authorization: Bearer`).
///
/// Nothing here is trusted until ``CredentialVerifier/init(settings:)`` has loaded it: that is where a bad key is
/// reported, once, at start-up, instead of every token failing later for no visible reason.
public struct AuthSettings: Sendable {
    /// Shared secrets for HS256 tokens (UTF-8 bytes of each string; at least 32 bytes, as
    /// RFC 7518 §3.2 requires of an HS256 key).
    public var hmacSecrets: [String]
    /// RS256 or ES256 (P-256) public keys, or X.509 certificates holding one, as PEM text.
    public var publicKeyPEMs: [String]
    /// JSON Web Key Set documents (`{"keys":[...]}`); a token's `kid` picks its key. This is how
    /// Firebase ID tokens are checked offline, from Google's published key set.
    public var jwks: [String]
    /// When set, verified tokens must be Firebase ID tokens of this project: `iss` is
    /// `https://securetoken.google.com/<project>`, `aud` is the project, and `sub` is not empty.
    public var firebaseProjectID: String?
    /// Secrets that make their bearer the admin, who bypasses rules (at least 16 bytes each).
    /// This is how a trusted back end gets admin access outside emulator mode: Google OAuth
    /// access tokens cannot be checked offline and are refused.
    public var adminSecrets: [String]
    /// Behave like the Firebase emulator: `owner` and any non-JWT access token are the admin,
    /// unsigned (`alg: none`) tokens are users without expiry checks, and signed tokens are taken
    /// unverified when no key is configured. Never for a server others can reach.
    public var emulatorMode: Bool
    /// How far `exp`, `nbf` and `iat` may be off from the server's clock.
    public var clockSkew: Duration

    /// Settings with every field given; defaults are nothing configured, outside emulator mode.
    public init(
        hmacSecrets: [String] = [],
        publicKeyPEMs: [String] = [],
        jwks: [String] = [],
        firebaseProjectID: String? = nil,
        adminSecrets: [String] = [],
        emulatorMode: Bool = false,
        clockSkew: Duration = .seconds(60)
    ) {
        self.hmacSecrets = hmacSecrets
        self.publicKeyPEMs = publicKeyPEMs
        self.jwks = jwks
        self.firebaseProjectID = firebaseProjectID
        self.adminSecrets = adminSecrets
        self.emulatorMode = emulatorMode
        self.clockSkew = clockSkew
    }

    /// The settings for a server with nothing configured: emulator mode when it listens on
    /// loopback only (a developer's machine, where the Firebase SDKs send `owner` and mock
    /// tokens), else no credential at all is accepted.
    public static func unconfigured(onLoopback: Bool) -> AuthSettings {
        AuthSettings(emulatorMode: onLoopback)
    }
}
