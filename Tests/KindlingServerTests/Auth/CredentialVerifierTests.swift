import Crypto
import CryptoExtras
import KindlingCore
import KindlingProtocol
import Testing

@testable import KindlingServer

@Suite("CredentialVerifier")
struct CredentialVerifierTests {
    typealias Claims = TestTokens.Claims
    let now = TestTokens.now
    let t = Double(TestTokens.nowSeconds)

    static func verifier(_ settings: AuthSettings) throws -> CredentialVerifier {
        try CredentialVerifier(settings: settings)
    }

    static let keyed = AuthSettings(
        hmacSecrets: [TestTokens.hmacSecret],
        publicKeyPEMs: [TestTokens.rsaKey.publicKey.pemRepresentation, TestTokens.ecKey.publicKey.pemRepresentation],
        adminSecrets: [TestTokens.adminSecret]
    )

    private func uid(_ result: Result<AuthState, AuthRefusal>) -> String? {
        if case .success(.user(let user)) = result { return user.uid }
        return nil
    }

    private func reason(_ result: Result<AuthState, AuthRefusal>) -> String? {
        if case .failure(.invalidToken(let reason)) = result { return reason }
        return nil
    }

    // MARK: Signed tokens

    @Test func acceptsTokensSignedWithEachConfiguredKeyType() async throws {
        let verifier = try Self.verifier(Self.keyed)
        for token in [
            try await TestTokens.hs256(.valid(sub: "h")),
            try await TestTokens.rs256(.valid(sub: "r")),
            try await TestTokens.es256(.valid(sub: "e")),
        ] {
            let result = verifier.authenticate(token, as: .idToken, now: now)
            #expect(uid(result) != nil, "\(result)")
        }
        #expect(uid(verifier.authenticate(try await TestTokens.es256(.valid(sub: "e")), as: .idToken, now: now)) == "e")
        // A JWT that came as an access token (`gauth`, `Bearer`) is read the same way.
        #expect(uid(verifier.authenticate(try await TestTokens.rs256(.valid(sub: "r")), as: .accessToken, now: now)) == "r")
    }

    @Test func refusesWrongSignaturesAndKeys() async throws {
        let verifier = try Self.verifier(Self.keyed)
        let wrongSecret = try await TestTokens.hs256(.valid(), secret: TestTokens.otherHMACSecret)
        let wrongRSA = try await TestTokens.rs256(.valid(), key: TestTokens.otherRSAKey)
        let wrongEC = try await TestTokens.es256(.valid(), key: TestTokens.otherECKey)
        for token in [wrongSecret, wrongRSA, wrongEC] {
            #expect(reason(verifier.authenticate(token, as: .idToken, now: now))?.contains("signature") == true)
        }
        // A valid token with its payload swapped for another user's keeps its signature, which then fails.
        let good = try await TestTokens.hs256(.valid(sub: "alice")).split(separator: ".")
        let forged = try await TestTokens.hs256(.valid(sub: "mallory"), secret: TestTokens.otherHMACSecret).split(separator: ".")
        let spliced = "\(good[0]).\(forged[1]).\(good[2])"
        #expect(reason(verifier.authenticate(spliced, as: .idToken, now: now))?.contains("signature") == true)
    }

    @Test func refusesAlgorithmConfusion() throws {
        // An HS256 token "signed" with the RSA public key's PEM must not verify against it.
        let pem = TestTokens.rsaKey.publicKey.pemRepresentation
        let verifier = try Self.verifier(AuthSettings(publicKeyPEMs: [pem]))
        let token = TestTokens.hs256Raw(header: #"{"alg":"HS256"}"#, payload: #"{"sub":"x"}"#, secret: pem)
        #expect(reason(verifier.authenticate(token, as: .idToken, now: now)) != nil)
        // Unsupported algorithms are refused outright.
        let rs384 = TestTokens.compact(header: #"{"alg":"RS384"}"#, payload: #"{"sub":"x"}"#, signature: [1, 2, 3])
        #expect(reason(verifier.authenticate(rs384, as: .idToken, now: now))?.contains("unsupported alg") == true)
    }

    @Test func enforcesExpiryWithClockSkew() async throws {
        let verifier = try Self.verifier(Self.keyed)
        let expired = try await TestTokens.hs256(Claims(sub: "a", iat: t - 7200, exp: t - 61))
        #expect(verifier.authenticate(expired, as: .idToken, now: now) == .failure(.expiredToken))
        let withinSkew = try await TestTokens.hs256(Claims(sub: "a", iat: t - 7200, exp: t - 59))
        #expect(uid(verifier.authenticate(withinSkew, as: .idToken, now: now)) == "a")
        // Accepted within the skew, it expires at the end of the skew too, not at once.
        if case .success(.user(let user)) = verifier.authenticate(withinSkew, as: .idToken, now: now) {
            #expect(user.expiresAt == Int64(t - 59) * 1000 + 60_000)
        } else {
            Issue.record("not accepted")
        }
        let strict = try Self.verifier(AuthSettings(hmacSecrets: [TestTokens.hmacSecret], clockSkew: .zero))
        #expect(strict.authenticate(withinSkew, as: .idToken, now: now) == .failure(.expiredToken))
        #expect(AuthRefusal.expiredToken.status == .expiredToken)
        #expect(AuthRefusal.expiredToken.status.rawValue == "expired_token")
    }

    @Test func refusesNotYetValidAndFutureIssuedTokens() async throws {
        let verifier = try Self.verifier(Self.keyed)
        let notYet = try await TestTokens.hs256(Claims(sub: "a", iat: t, exp: t + 3600, nbf: t + 120))
        #expect(reason(verifier.authenticate(notYet, as: .idToken, now: now))?.contains("nbf") == true)
        let future = try await TestTokens.hs256(Claims(sub: "a", iat: t + 120, exp: t + 3600))
        #expect(reason(verifier.authenticate(future, as: .idToken, now: now))?.contains("iat") == true)
        let slightlyFuture = try await TestTokens.hs256(Claims(sub: "a", iat: t + 30, exp: t + 3600, nbf: t + 30))
        #expect(uid(verifier.authenticate(slightlyFuture, as: .idToken, now: now)) == "a")
        let badTime = TestTokens.hs256Raw(header: #"{"alg":"HS256"}"#, payload: #"{"sub":"a","exp":"tomorrow"}"#)
        #expect(reason(verifier.authenticate(badTime, as: .idToken, now: now))?.contains("exp") == true)
        let hugeTime = TestTokens.hs256Raw(header: #"{"alg":"HS256"}"#, payload: #"{"sub":"a","exp":1e300}"#)
        #expect(reason(verifier.authenticate(hugeTime, as: .idToken, now: now))?.contains("exp") == true)
    }

    @Test func reportsExpiryForTheConnection() async throws {
        let verifier = try Self.verifier(Self.keyed)
        let token = try await TestTokens.rs256(Claims(sub: "a", iat: t, exp: t + 3600))
        guard case .success(let state) = verifier.authenticate(token, as: .idToken, now: now) else {
            Issue.record("refused")
            return
        }
        // exp, plus the 60 s of clock skew the token would still be accepted within.
        #expect(state.expiresAt == now + 3_600_000 + 60_000)
        #expect(state.expiry == .number(t + 3600))
    }

    @Test func checksFirebaseIssuerAudienceAndSubject() async throws {
        var settings = Self.keyed
        settings.firebaseProjectID = "my-app"
        let verifier = try Self.verifier(settings)
        func firebase(iss: String = "https://securetoken.google.com/my-app", aud: String = "my-app", sub: String = "u1") -> Claims {
            Claims(sub: sub, iss: iss, aud: aud, iat: t, exp: t + 3600, firebase: .init(sign_in_provider: "password"))
        }
        #expect(uid(verifier.authenticate(try await TestTokens.rs256(firebase()), as: .idToken, now: now)) == "u1")
        let wrongIssuer = try await TestTokens.rs256(firebase(iss: "https://securetoken.google.com/other"))
        #expect(reason(verifier.authenticate(wrongIssuer, as: .idToken, now: now))?.contains("iss") == true)
        let wrongAudience = try await TestTokens.rs256(firebase(aud: "other"))
        #expect(reason(verifier.authenticate(wrongAudience, as: .idToken, now: now))?.contains("aud") == true)
        let noSubject = try await TestTokens.rs256(firebase(sub: ""))
        #expect(reason(verifier.authenticate(noSubject, as: .idToken, now: now))?.contains("sub") == true)
        let noExpiry = try await TestTokens.rs256(Claims(sub: "u1", iss: "https://securetoken.google.com/my-app", aud: "my-app", iat: t))
        #expect(reason(verifier.authenticate(noExpiry, as: .idToken, now: now))?.contains("exp") == true)
    }

    @Test func picksKeySetKeysByKid() async throws {
        let verifier = try Self.verifier(AuthSettings(jwks: [try TestTokens.jwks(rsaKID: "r1", ecKID: "e1")]))
        #expect(uid(verifier.authenticate(try await TestTokens.rs256(.valid(sub: "r"), kid: "r1"), as: .idToken, now: now)) == "r")
        #expect(uid(verifier.authenticate(try await TestTokens.es256(.valid(sub: "e"), kid: "e1"), as: .idToken, now: now)) == "e")
        #expect(uid(verifier.authenticate(try await TestTokens.rs256(.valid(sub: "r")), as: .idToken, now: now)) == "r")
        // Signed by a key the set does not hold, whatever kid it claims.
        let stranger = try await TestTokens.rs256(.valid(), key: TestTokens.otherRSAKey, kid: "r1")
        #expect(reason(verifier.authenticate(stranger, as: .idToken, now: now)) != nil)
        // The right key but a kid the set gives another key: only that key is tried.
        let mislabelled = try await TestTokens.es256(.valid(), kid: "r1")
        #expect(reason(verifier.authenticate(mislabelled, as: .idToken, now: now)) != nil)
    }

    // MARK: Admin, owner, access tokens

    @Test func adminSecretIsAdminEitherWay() throws {
        let verifier = try Self.verifier(Self.keyed)
        #expect(verifier.authenticate(TestTokens.adminSecret, as: .idToken, now: now) == .success(.admin))
        #expect(verifier.authenticate(TestTokens.adminSecret, as: .accessToken, now: now) == .success(.admin))
        #expect(reason(verifier.authenticate(TestTokens.adminSecret + "x", as: .idToken, now: now)) != nil)
        #expect(reason(verifier.authenticate(String(TestTokens.adminSecret.dropLast()), as: .accessToken, now: now)) != nil)
    }

    @Test func ownerIsAdminOnlyInEmulatorMode() throws {
        let emulator = try Self.verifier(AuthSettings(emulatorMode: true))
        #expect(emulator.authenticate("owner", as: .accessToken, now: now) == .success(.admin))
        #expect(emulator.authenticate("owner", as: .idToken, now: now) == .success(.admin))
        for settings in [AuthSettings(), Self.keyed] {
            let verifier = try Self.verifier(settings)
            for kind in [CredentialKind.idToken, .accessToken] {
                #expect(reason(verifier.authenticate("owner", as: kind, now: now)) != nil)
            }
        }
    }

    @Test func googleAccessTokensAreAdminOnlyInEmulatorMode() throws {
        let accessToken = "ya29.a0AfH6SMBexample-access-token"
        let emulator = try Self.verifier(AuthSettings(emulatorMode: true))
        #expect(emulator.authenticate(accessToken, as: .accessToken, now: now) == .success(.admin))
        // As an ID token (`auth`, `?auth=`) a non-JWT string is never the admin.
        #expect(reason(emulator.authenticate(accessToken, as: .idToken, now: now)) == "not a JWT")
        #expect(reason(emulator.authenticate("", as: .accessToken, now: now)) != nil)
        let production = try Self.verifier(Self.keyed)
        #expect(reason(production.authenticate(accessToken, as: .accessToken, now: now))?.contains("admin secret") == true)
        #expect(reason(production.authenticate("a-legacy-database-secret", as: .idToken, now: now)) == "not a JWT")
    }

    // MARK: Unsigned and emulator tokens

    @Test func acceptsTheJSSDKMockUserTokenInEmulatorMode() throws {
        let token = TestTokens.mockUserToken(sub: "alice", extra: #","name":"Alice","isAdmin":true"#)
        #expect(token.hasSuffix("."))
        for settings in [AuthSettings(emulatorMode: true), AuthSettings(hmacSecrets: [TestTokens.hmacSecret], emulatorMode: true)] {
            let verifier = try Self.verifier(settings)
            guard case .success(.user(let user)) = verifier.authenticate(token, as: .idToken, now: now) else {
                Issue.record("mock token refused")
                continue
            }
            #expect(user.uid == "alice")
            #expect(user.expiresAt == nil)  // iat 0, exp 3600: long past, and not enforced
            #expect(user.expiry == .number(3600))
            #expect(user.ruleValue["provider"] == .string("custom"))
            #expect(user.ruleValue["token"]?["isAdmin"] == .bool(true))
            #expect(user.ruleValue["token"]?["name"] == .string("Alice"))
        }
    }

    @Test func refusesUnsignedTokensOutsideEmulatorMode() throws {
        let token = TestTokens.mockUserToken(sub: "alice")
        for settings in [AuthSettings(), Self.keyed] {
            let result = try Self.verifier(settings).authenticate(token, as: .idToken, now: now)
            #expect(reason(result)?.contains("emulator mode only") == true)
        }
        // `alg: none` with a signature attached is not an unsigned token.
        let signedNone = TestTokens.compact(header: #"{"alg":"none"}"#, payload: #"{"sub":"a"}"#, signature: [1])
        #expect(reason(try Self.verifier(AuthSettings(emulatorMode: true)).authenticate(signedNone, as: .idToken, now: now)) != nil)
    }

    @Test func signedTokensInEmulatorModeAreVerifiedWhenKeysExist() async throws {
        let forged = try await TestTokens.hs256(.valid(sub: "a"), secret: TestTokens.otherHMACSecret)
        let unkeyed = try Self.verifier(AuthSettings(emulatorMode: true))
        #expect(uid(unkeyed.authenticate(forged, as: .idToken, now: now)) == "a")
        let keyed = try Self.verifier(AuthSettings(hmacSecrets: [TestTokens.hmacSecret], emulatorMode: true))
        #expect(reason(keyed.authenticate(forged, as: .idToken, now: now))?.contains("signature") == true)
        let rs512 = TestTokens.compact(header: #"{"alg":"RS512","kid":"x"}"#, payload: #"{"sub":"b"}"#, signature: [9, 9])
        #expect(uid(unkeyed.authenticate(rs512, as: .idToken, now: now)) == "b")
        #expect(reason(keyed.authenticate(rs512, as: .idToken, now: now))?.contains("unsupported alg") == true)
        let noKeys = try Self.verifier(AuthSettings())
        #expect(reason(noKeys.authenticate(forged, as: .idToken, now: now))?.contains("no key") == true)
    }

    // MARK: Shape

    @Test func authValueHasUidProviderAndEveryClaim() async throws {
        let verifier = try Self.verifier(Self.keyed)
        var claims = Claims.valid(sub: "bob")
        claims.isAdmin = true
        claims.firebase = .init(sign_in_provider: "google.com")
        guard case .success(.user(let user)) = verifier.authenticate(try await TestTokens.hs256(claims), as: .idToken, now: now) else {
            Issue.record("refused")
            return
        }
        #expect(user.uid == "bob")
        #expect(user.ruleValue["uid"] == .string("bob"))
        #expect(user.ruleValue["provider"] == .string("google.com"))
        #expect(user.ruleValue["token"]?["sub"] == .string("bob"))
        #expect(user.ruleValue["token"]?["isAdmin"] == .bool(true))
        #expect(user.ruleValue["token"]?["firebase"]?["sign_in_provider"] == .string("google.com"))
        #expect(user.ruleValue["token"]?["exp"] == .number(t + 3600))
        guard case .object(let members) = user.ruleValue else {
            Issue.record("the rules' auth value is not an object: \(user.ruleValue)")
            return
        }
        #expect(members.map(\.key) == ["uid", "provider", "token"])
    }

    @Test func uidFallsBackToUserIDAndIsRequired() async throws {
        let verifier = try Self.verifier(Self.keyed)
        let userIDOnly = try await TestTokens.hs256(Claims(user_id: "carol", iat: t, exp: t + 60))
        guard case .success(.user(let user)) = verifier.authenticate(userIDOnly, as: .idToken, now: now) else {
            Issue.record("refused")
            return
        }
        #expect(user.uid == "carol")
        #expect(user.ruleValue["provider"] == .string("custom"))
        let anonymous = try await TestTokens.hs256(Claims(iat: t, exp: t + 60))
        #expect(reason(verifier.authenticate(anonymous, as: .idToken, now: now))?.contains("sub") == true)
    }

    @Test func refusesGarbage() throws {
        let verifier = try Self.verifier(Self.keyed)
        let emulator = try Self.verifier(AuthSettings(emulatorMode: true))
        let garbage = [
            "", ".", "..", "...", "a.b.c", "a.b", "🔥.🔥.🔥", "eyJ.eyJ.", "null", "{}",
            TestTokens.compact(header: "[]", payload: "{}"),
            TestTokens.compact(header: #"{"alg":5}"#, payload: "{}"),
            TestTokens.compact(header: #"{"alg":"none"}"#, payload: "[1]"),
            TestTokens.compact(header: #"{"alg":"none"}"#, payload: "not json"),
            TestTokens.compact(header: #"{"alg":"none","crit":["exp"]}"#, payload: #"{"sub":"a"}"#),
            TestTokens.compact(header: #"{"alg":"none"}"#, payload: #"{"sub":"a"}"#) + "=",
            String(repeating: "a", count: 20_000),
            TestTokens.compact(header: #"{"alg":"none"}"#, payload: #"{"sub":""# + String(repeating: "x", count: 17_000) + #""}"#),
        ]
        for text in garbage {
            #expect(reason(verifier.authenticate(text, as: .idToken, now: now)) != nil, "\(text.prefix(40))")
            #expect(reason(verifier.authenticate(text, as: .accessToken, now: now)) != nil, "\(text.prefix(40))")
            #expect(reason(emulator.authenticate(text, as: .idToken, now: now)) != nil, "\(text.prefix(40))")
        }
    }
}

@Suite("CredentialVerifier certificates")
struct CredentialVerifierCertificateTests {
    @Test func verifiesWithTheKeyOfAnX509Certificate() async throws {
        let verifier = try CredentialVerifier(
            settings: AuthSettings(publicKeyPEMs: [TestCertificates.ecCertificate, TestCertificates.rsaCertificate]))
        let ecKey = try P256.Signing.PrivateKey(pemRepresentation: TestCertificates.ecPrivateKey)
        let rsaKey = try _RSA.Signing.PrivateKey(pemRepresentation: TestCertificates.rsaPrivateKey)
        let es = try await TestTokens.es256(.valid(sub: "cert-ec"), key: ecKey)
        let rs = try await TestTokens.rs256(.valid(sub: "cert-rsa"), key: rsaKey)
        guard case .success(.user(let ecUser)) = verifier.authenticate(es, as: .idToken, now: TestTokens.now),
            case .success(.user(let rsaUser)) = verifier.authenticate(rs, as: .idToken, now: TestTokens.now)
        else {
            Issue.record("a certificate's key did not verify")
            return
        }
        #expect(ecUser.uid == "cert-ec")
        #expect(rsaUser.uid == "cert-rsa")
        let stranger = try await TestTokens.es256(.valid(), key: TestTokens.otherECKey)
        if case .success = verifier.authenticate(stranger, as: .idToken, now: TestTokens.now) {
            Issue.record("a token signed by another key was accepted")
        }
    }
}
