import Crypto
import CryptoExtras
import Foundation
import JWTKit

/// Keys generated once per test run, and helpers that sign tokens with them through jwt-kit
/// (as an issuer would) or build raw compact tokens byte by byte (for shapes jwt-kit won't make).
enum TestTokens {
    /// A test clock: ms since the epoch, and the same instant in seconds.
    static let now: Int64 = 1_800_000_000_000
    static let nowSeconds = 1_800_000_000

    static let hmacSecret = "kindling-test-hmac-secret-of-32-bytes-or-more"
    static let otherHMACSecret = "another-hmac-secret-that-is-long-enough-123"
    static let adminSecret = "kindling-admin-secret-0123456789"

    static let rsaKey: _RSA.Signing.PrivateKey = {
        // A 2048-bit key takes a moment to make; one is enough for every test.
        guard let key = try? _RSA.Signing.PrivateKey(keySize: .bits2048) else { preconditionFailure("RSA key generation failed") }
        return key
    }()
    static let otherRSAKey: _RSA.Signing.PrivateKey = {
        guard let key = try? _RSA.Signing.PrivateKey(keySize: .bits2048) else { preconditionFailure("RSA key generation failed") }
        return key
    }()
    static let ecKey = P256.Signing.PrivateKey()
    static let otherECKey = P256.Signing.PrivateKey()

    /// Claims an issuer puts in a token; nil members are left out.
    struct Claims: JWTPayload {
        var sub: String?
        // swift-format-ignore: AlwaysUseLowerCamelCase
        // The claim's name in the token.
        var user_id: String?
        var iss: String?
        var aud: String?
        var iat: Double?
        var exp: Double?
        var nbf: Double?
        var isAdmin: Bool?
        var firebase: Firebase?

        struct Firebase: Codable, Sendable {
            // swift-format-ignore: AlwaysUseLowerCamelCase
            // The claim's name in the token.
            var sign_in_provider: String
        }

        func verify(using algorithm: some JWTAlgorithm) async throws {}

        /// A user token valid at ``TestTokens/now`` for an hour.
        static func valid(sub: String = "alice") -> Claims {
            Claims(sub: sub, iat: Double(nowSeconds - 10), exp: Double(nowSeconds + 3600))
        }
    }

    static func hs256(_ claims: Claims, secret: String = hmacSecret) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return try await keys.sign(claims)
    }

    static func rs256(_ claims: Claims, key: _RSA.Signing.PrivateKey = rsaKey, kid: String? = nil) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(rsa: try Insecure.RSA.PrivateKey(backing: key), digestAlgorithm: .sha256, kid: kid.map { JWKIdentifier(string: $0) })
        return try await keys.sign(claims, kid: kid.map { JWKIdentifier(string: $0) })
    }

    static func es256(_ claims: Claims, key: P256.Signing.PrivateKey = ecKey, kid: String? = nil) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PrivateKey(backing: key), kid: kid.map { JWKIdentifier(string: $0) })
        return try await keys.sign(claims, kid: kid.map { JWKIdentifier(string: $0) })
    }

    /// A JWKS document holding the RSA and EC test keys under the given ids.
    static func jwks(rsaKID: String, ecKID: String) throws -> String {
        let primitives = try Insecure.RSA.PublicKey(backing: rsaKey.publicKey).getKeyPrimitives()
        let point = Array(ecKey.publicKey.x963Representation)
        let x = base64URL(Array(point[1...32])), y = base64URL(Array(point[33...64]))
        return """
            {"keys":[
              {"kty":"RSA","alg":"RS256","use":"sig","kid":"\(rsaKID)","n":"\(base64URL(Array(primitives.modulus)))","e":"\(base64URL(Array(primitives.publicExponent)))"},
              {"kty":"EC","crv":"P-256","alg":"ES256","kid":"\(ecKID)","x":"\(x)","y":"\(y)"},
              {"kty":"RSA","use":"enc","kid":"encryption-only","n":"AQAB","e":"AQAB"}
            ]}
            """
    }

    /// A compact token from raw header and payload JSON and signature bytes.
    static func compact(header: String, payload: String, signature: [UInt8] = []) -> String {
        "\(base64URL(Array(header.utf8))).\(base64URL(Array(payload.utf8))).\(base64URL(signature))"
    }

    /// A compact token from raw JSON, signed HS256 with `secret` (for header shapes jwt-kit won't make).
    static func hs256Raw(header: String, payload: String, secret: String = hmacSecret) -> String {
        let input = "\(base64URL(Array(header.utf8))).\(base64URL(Array(payload.utf8)))"
        let mac = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: SymmetricKey(data: Array(secret.utf8)))
        return "\(input).\(base64URL(Array(mac)))"
    }

    /// What the JS SDK's `createMockUserToken({sub, ...extra}, project)` sends: header
    /// `{"alg":"none","type":"JWT"}`, the default Firebase claims (iat 0, exp 3600), the user's
    /// fields after them, and an empty signature.
    static func mockUserToken(sub: String, project: String = "demo-project", extra: String = "") -> String {
        let payload = """
            {"iss":"https://securetoken.google.com/\(project)","aud":"\(project)","iat":0,"exp":3600,"auth_time":0,\
            "sub":"\(sub)","user_id":"\(sub)","firebase":{"sign_in_provider":"custom","identities":{}}\(extra)}
            """
        return compact(header: #"{"alg":"none","type":"JWT"}"#, payload: payload)
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
