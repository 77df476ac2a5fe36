import Crypto
import KindlingCore

/// Checks the credentials clients present and says who they act as. Made once from
/// ``AuthSettings`` (keys are parsed there, not per token) and shared by every connection.
///
/// What is accepted:
/// - a configured admin secret, as either kind: the admin;
/// - a JWT signed with a configured key (HS256 secret, RS256/ES256 PEM key or certificate, or
///   a JWKS key picked by `kid`), within `exp`/`nbf`/`iat` give or take the clock skew, and
///   issued for the Firebase project when one is set: that user;
/// - in emulator mode only: `owner` (either kind) and any other non-JWT access token as the
///   admin, as the Firebase emulator does; unsigned (`alg: none`) tokens, such as the JS SDK's
///   `mockUserToken`, as users without expiry checks; and signed tokens unverified when no key
///   is configured.
///
/// Everything else is refused. In particular Google OAuth access tokens (firebase-admin's
/// `Bearer ya29…`) cannot be checked offline: outside emulator mode the admin credential is an
/// admin secret.
public final class CredentialVerifier: Sendable {
    private let keys: [VerificationKey]
    private let adminSecretDigests: [SHA256Digest]
    private let emulatorMode: Bool
    private let firebaseProjectID: String?
    private let clockSkewMillis: Int64

    /// Loads the settings' keys; throws naming the first unusable one.
    public init(settings: AuthSettings) throws(AuthSettingsError) {
        let skew = settings.clockSkew.components
        guard skew.seconds >= 0, skew.attoseconds >= 0, skew.seconds <= 86_400 else { throw .clockSkewOutOfRange }
        if let project = settings.firebaseProjectID, project.isEmpty { throw .emptyProjectID }
        var keys: [VerificationKey] = []
        for (index, secret) in settings.hmacSecrets.enumerated() {
            guard secret.utf8.count >= 32 else { throw .hmacSecretTooShort(index: index) }
            keys.append(.hmac(secret: secret))
        }
        for (index, pem) in settings.publicKeyPEMs.enumerated() {
            switch VerificationKey.pem(pem, index: index) {
            case .success(let key): keys.append(key)
            case .failure(let error): throw error
            }
        }
        for (index, document) in settings.jwks.enumerated() {
            switch VerificationKey.keySet(document, index: index) {
            case .success(let set): keys.append(contentsOf: set)
            case .failure(let error): throw error
            }
        }
        var digests: [SHA256Digest] = []
        for (index, secret) in settings.adminSecrets.enumerated() {
            guard secret.utf8.count >= 16 else { throw .adminSecretTooShort(index: index) }
            digests.append(SHA256.hash(data: Array(secret.utf8)))
        }
        self.keys = keys
        self.adminSecretDigests = digests
        self.emulatorMode = settings.emulatorMode
        self.firebaseProjectID = settings.firebaseProjectID
        self.clockSkewMillis = skew.seconds * 1000 + skew.attoseconds / 1_000_000_000_000_000
    }

    /// Who `credential` acts as, at `now` (ms since the epoch), or why it is refused.
    public func authenticate(_ credential: String, as kind: CredentialKind, now: Int64) -> Result<AuthState, AuthRefusal> {
        guard credential.utf8.count <= CompactJWT.maxLength else {
            return .failure(.invalidToken("credential longer than \(CompactJWT.maxLength) bytes"))
        }
        if isAdminSecret(credential) { return .success(.admin) }
        if emulatorMode, credential == "owner" { return .success(.admin) }
        switch CompactJWT.parse(credential) {
        case .success(let token):
            return verify(token, now: now).map(AuthState.user)
        case .failure(.malformed(let reason)):
            return .failure(.invalidToken(reason))
        case .failure(.notJWT):
            guard kind == .accessToken else { return .failure(.invalidToken("not a JWT")) }
            if emulatorMode, !credential.isEmpty { return .success(.admin) }
            return .failure(.invalidToken("access tokens cannot be verified by this server; use an admin secret"))
        }
    }

    /// Compares against every admin secret without stopping early, so timing does not tell how
    /// much of a guess was right (digest equality is constant time in swift-crypto).
    private func isAdminSecret(_ credential: String) -> Bool {
        guard !adminSecretDigests.isEmpty else { return false }
        let digest = SHA256.hash(data: Array(credential.utf8))
        var matched = false
        for secret in adminSecretDigests {
            matched = (secret == digest) || matched
        }
        return matched
    }

    private func verify(_ token: CompactJWT, now: Int64) -> Result<AuthenticatedUser, AuthRefusal> {
        if token.algorithm == "none" {
            guard emulatorMode else { return .failure(.invalidToken("unsigned tokens are accepted in emulator mode only")) }
            guard token.signature.isEmpty else { return .failure(.invalidToken("an unsigned token must have an empty signature")) }
            return user(from: token.claims, expiresAt: nil)
        }
        if keys.isEmpty {
            // The emulator "accepts all jwt algorithms": with nothing to check against, any.
            guard emulatorMode else { return .failure(.invalidToken("no key is configured to verify signed tokens")) }
            return user(from: token.claims, expiresAt: nil)
        }
        guard let algorithm = VerificationKey.Algorithm(rawValue: token.algorithm) else {
            return .failure(.invalidToken("unsupported alg \(token.algorithm)"))
        }
        guard candidates(for: algorithm, kid: token.keyID).contains(where: { $0.verifies(token.signature, of: token.signingInput) }) else {
            return .failure(.invalidToken("signature does not verify with any configured \(algorithm.rawValue) key"))
        }
        return checkClaims(token.claims, now: now).flatMap { expiresAt in user(from: token.claims, expiresAt: expiresAt) }
    }

    /// The keys a token may be signed with: those of its `kid` when a key set has it, else every
    /// key of its algorithm that has no `kid` or, for a token without `kid`, any key.
    private func candidates(for algorithm: VerificationKey.Algorithm, kid: String?) -> [VerificationKey] {
        let sameAlgorithm = keys.filter { $0.algorithm == algorithm }
        guard let kid else { return sameAlgorithm }
        let named = sameAlgorithm.filter { $0.kid == kid }
        return named.isEmpty ? sameAlgorithm.filter { $0.kid == nil } : named
    }

    /// Checks the time and issuer claims of a verified token; returns when it stops being
    /// accepted, in ms: its `exp` plus the clock skew, so a token taken within the skew is not
    /// revoked by the expiry timer the moment it is taken.
    private func checkClaims(_ claims: JSONValue, now: Int64) -> Result<Int64?, AuthRefusal> {
        let exp: Int64?, nbf: Int64?, iat: Int64?
        switch (Self.time(claims, "exp"), Self.time(claims, "nbf"), Self.time(claims, "iat")) {
        case (.success(let e), .success(let n), .success(let i)): (exp, nbf, iat) = (e, n, i)
        case (.failure(let error), _, _), (_, .failure(let error), _), (_, _, .failure(let error)): return .failure(error)
        }
        if let project = firebaseProjectID {
            guard claims["iss"]?.stringValue == "https://securetoken.google.com/\(project)" else {
                return .failure(.invalidToken("iss is not https://securetoken.google.com/\(project)"))
            }
            guard Self.audience(claims["aud"], contains: project) else { return .failure(.invalidToken("aud is not \(project)")) }
            guard let sub = claims["sub"]?.stringValue, !sub.isEmpty, sub.utf8.count <= 128 else {
                return .failure(.invalidToken("sub must be a non-empty string of at most 128 bytes"))
            }
            guard exp != nil, iat != nil else { return .failure(.invalidToken("a Firebase ID token needs exp and iat")) }
        }
        let (latest, over) = now.addingReportingOverflow(clockSkewMillis)
        let (earliest, under) = now.subtractingReportingOverflow(clockSkewMillis)
        if let nbf, !over, nbf > latest { return .failure(.invalidToken("token is not valid yet (nbf)")) }
        if let iat, !over, iat > latest { return .failure(.invalidToken("token was issued in the future (iat)")) }
        if let exp, !under, earliest >= exp { return .failure(.expiredToken) }
        // exp is at most 10^14 ms and the skew at most a day: no overflow.
        return .success(exp.map { $0 + clockSkewMillis })
    }

    /// A NumericDate claim in ms, nil when absent; refused unless a number of seconds between
    /// 0 and 10^11 (so the product cannot overflow).
    private static func time(_ claims: JSONValue, _ name: String) -> Result<Int64?, AuthRefusal> {
        guard let value = claims[name] else { return .success(nil) }
        guard let seconds = value.numberValue, seconds >= 0, seconds <= 1e11 else {
            return .failure(.invalidToken("\(name) is not a time in seconds"))
        }
        return .success(Int64((seconds * 1000).rounded(.down)))
    }

    private static func audience(_ value: JSONValue?, contains project: String) -> Bool {
        switch value {
        case .string(let audience)?: audience == project
        case .array(let audiences)?: audiences.contains { $0.stringValue == project }
        default: false
        }
    }

    /// The rules' `auth` for a token's claims: `{"uid", "provider", "token"}`.
    private func user(from claims: JSONValue, expiresAt: Int64?) -> Result<AuthenticatedUser, AuthRefusal> {
        let uid: String
        if let sub = claims["sub"]?.stringValue, !sub.isEmpty {
            uid = sub
        } else if let userID = claims["user_id"]?.stringValue, !userID.isEmpty {
            uid = userID
        } else {
            return .failure(.invalidToken("token has no sub or user_id"))
        }
        let provider = claims["firebase"]?["sign_in_provider"]?.stringValue ?? "custom"
        let auth = JSONValue.object([
            JSONMember("uid", .string(uid)),
            JSONMember("provider", .string(provider)),
            JSONMember("token", claims),
        ])
        return .success(AuthenticatedUser(ruleValue: auth, expiresAt: expiresAt, expiry: claims["exp"] ?? .null))
    }
}
