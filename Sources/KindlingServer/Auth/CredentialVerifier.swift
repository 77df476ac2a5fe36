// TEMPORARY LOCAL STUB (never committed): the tokens helper's branch replaces this file.
import KindlingCore
public struct AuthSettings: Sendable {
    public var hmacSecrets: [String] = []
    public var publicKeyPEMs: [String] = []
    public var jwks: [String] = []
    public var firebaseProjectID: String?
    public var adminSecrets: [String] = []
    public var emulatorMode: Bool = true
    public var clockSkew: Duration = .seconds(60)
    public init() {}
    public var hasVerifyingKey: Bool { !hmacSecrets.isEmpty || !publicKeyPEMs.isEmpty || !jwks.isEmpty }
}
public enum CredentialKind: Sendable { case idToken, accessToken }
public enum AuthRefusal: Error, Sendable { case invalidToken(String), expiredToken }
public final class CredentialVerifier: Sendable {
    let settings: AuthSettings
    public init(settings: AuthSettings) throws { self.settings = settings }
    public func authenticate(_ credential: String, as kind: CredentialKind, now: Int64) -> Result<AuthState, AuthRefusal> {
        if settings.adminSecrets.contains(credential) { return .success(.admin) }
        guard let state = AuthState.from(credential: credential, isGoogleToken: kind == .accessToken) else { return .failure(.invalidToken("Could not parse auth token.")) }
        return .success(state)
    }
}
extension AuthState {
    public var expiresAt: Int64? { nil }
    public static func overridden(by value: JSONValue) -> AuthState {
        if case .object = value { return .user(claims: value) }
        return .anonymous
    }
}
extension AuthState {
    var expiry: JSONValue {
        if case .user(let claims) = self, let exp = claims["exp"] { return exp }
        return .null
    }
}
