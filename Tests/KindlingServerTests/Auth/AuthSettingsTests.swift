import Crypto
import CryptoExtras
import Testing

@testable import KindlingServer

@Suite("AuthSettings")
struct AuthSettingsTests {
    private func error(_ settings: AuthSettings) -> AuthSettingsError? {
        do throws(AuthSettingsError) {
            _ = try CredentialVerifier(settings: settings)
            return nil
        } catch {
            return error
        }
    }

    @Test func namesTheBadKey() throws {
        let good = TestTokens.rsaKey.publicKey.pemRepresentation
        #expect(
            error(AuthSettings(publicKeyPEMs: [good, "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"])).map {
                if case .unreadablePublicKey(index: 1, _) = $0 { true } else { false }
            } == true)
        #expect(error(AuthSettings(hmacSecrets: [TestTokens.hmacSecret, "short"])) == .hmacSecretTooShort(index: 1))
        #expect(error(AuthSettings(adminSecrets: ["owner"])) == .adminSecretTooShort(index: 0))
        #expect(error(AuthSettings(firebaseProjectID: "")) == .emptyProjectID)
        #expect(error(AuthSettings(clockSkew: .seconds(-1))) == .clockSkewOutOfRange)
        #expect(error(AuthSettings(jwks: ["[]"])).map { if case .unreadableKeySet(index: 0, _) = $0 { true } else { false } } == true)
        let badKey = #"{"keys":[{"kty":"RSA","kid":"k9","n":"AQAB","e":"AQAB"}]}"#
        let failure = error(AuthSettings(jwks: [badKey]))
        #expect(failure.map { if case .unusableKey(index: 0, key: 0, kid: "k9", _) = $0 { true } else { false } } == true)
        #expect(failure?.description.contains("jwks[0] key 0 (kid \"k9\")") == true)
        #expect(error(AuthSettings(jwks: [#"{"keys":[{"kty":"oct","k":"AAAA"}]}"#])) != nil)
    }

    @Test func loadsCertificatesKeysAndKeySets() throws {
        let settings = AuthSettings(
            hmacSecrets: [TestTokens.hmacSecret],
            publicKeyPEMs: [TestTokens.rsaKey.publicKey.pemRepresentation, TestTokens.ecKey.publicKey.pemRepresentation],
            jwks: [try TestTokens.jwks(rsaKID: "a", ecKID: "b")],
            adminSecrets: [TestTokens.adminSecret]
        )
        #expect(error(settings) == nil)
        #expect(AuthSettings.unconfigured(onLoopback: true).emulatorMode)
        #expect(!AuthSettings.unconfigured(onLoopback: false).emulatorMode)
    }
}
