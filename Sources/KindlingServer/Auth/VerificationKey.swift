import Crypto
import CryptoExtras
import JWTKit
import KindlingCore

/// One key a token's signature can be checked with, loaded through jwt-kit's key types (PEM,
/// certificate and JWK parsing, RSA size checks) and checked synchronously with swift-crypto,
/// since jwt-kit's own verification is async and the request path is not.
struct VerificationKey: Sendable {
    /// The signature algorithms Kindling verifies (the `alg` header).
    enum Algorithm: String, Sendable {
        case hs256 = "HS256"
        case rs256 = "RS256"
        case es256 = "ES256"
    }

    /// The key itself.
    enum Material: Sendable {
        case hmac(SymmetricKey)
        case rsa(_RSA.Signing.PublicKey)
        case p256(P256.Signing.PublicKey)
    }

    /// The JWK `kid`, for keys from a key set.
    let kid: String?
    let material: Material

    var algorithm: Algorithm {
        switch material {
        case .hmac: .hs256
        case .rsa: .rs256
        case .p256: .es256
        }
    }

    /// Whether `signature` is this key's signature of `input`, in constant time for HMAC.
    func verifies(_ signature: [UInt8], of input: [UInt8]) -> Bool {
        switch material {
        case .hmac(let key):
            return HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: input, using: key)
        case .rsa(let key):
            let rsaSignature = _RSA.Signing.RSASignature(rawRepresentation: signature)
            return key.isValidSignature(rsaSignature, for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
        case .p256(let key):
            guard let ecdsaSignature = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(ecdsaSignature, for: SHA256.hash(data: input))
        }
    }

    /// An HS256 key from a shared secret's UTF-8 bytes.
    static func hmac(secret: String) -> VerificationKey {
        VerificationKey(kid: nil, material: .hmac(SymmetricKey(data: Array(secret.utf8))))
    }

    /// An RS256 or ES256 key from `publicKeyPEMs[index]`, a PEM public key or certificate; the
    /// error says why neither reading worked.
    static func pem(_ text: String, index: Int) -> Result<VerificationKey, AuthSettingsError> {
        let isCertificate = text.contains("-----BEGIN CERTIFICATE-----")
        let rsaReason: String
        do {
            let key = isCertificate ? try Insecure.RSA.PublicKey(certificatePEM: text) : try Insecure.RSA.PublicKey(pem: text)
            return .success(VerificationKey(kid: nil, material: .rsa(try _RSA.Signing.PublicKey(pemRepresentation: key.pemRepresentation))))
        } catch {
            rsaReason = "\(error)"
        }
        do {
            let key = isCertificate ? try ES256PublicKey(certificate: text) : try ES256PublicKey(pem: text)
            return .success(VerificationKey(kid: nil, material: .p256(try P256.Signing.PublicKey(pemRepresentation: key.pemRepresentation))))
        } catch {
            return .failure(.unreadablePublicKey(index: index, reason: "not RSA (\(rsaReason)), not P-256 (\(error))"))
        }
    }

    /// The signing keys of a JWKS document (keys marked `"use":"enc"` are skipped), or an error
    /// naming the first key that cannot verify RS256 or ES256.
    static func keySet(_ document: String, index: Int) -> Result<[VerificationKey], AuthSettingsError> {
        guard let parsed = try? JSONParser.parse(document), case .array(let keys)? = parsed["keys"] else {
            return .failure(.unreadableKeySet(index: index, reason: "expected a JSON object with a \"keys\" array"))
        }
        var loaded: [VerificationKey] = []
        for (position, jwk) in keys.enumerated() {
            let kid = jwk["kid"]?.stringValue
            if jwk["use"]?.stringValue == "enc" { continue }
            if let reason = problem(withJWK: jwk) {
                return .failure(.unusableKey(index: index, key: position, kid: kid, reason: reason))
            }
            switch key(fromJWK: jwk, kid: kid) {
            case .success(let key): loaded.append(key)
            case .failure(let error): return .failure(.unusableKey(index: index, key: position, kid: kid, reason: "\(error)"))
            }
        }
        return .success(loaded)
    }

    /// Why a JWK's fields cannot make an RS256 or ES256 key, or nil when they can.
    private static func problem(withJWK jwk: JSONValue) -> String? {
        let alg = jwk["alg"]?.stringValue
        switch jwk["kty"]?.stringValue {
        case "RSA":
            if let alg, alg != "RS256" { return "alg \(alg) is not RS256" }
            if jwk["n"]?.stringValue == nil || jwk["e"]?.stringValue == nil { return "RSA key without n and e" }
        case "EC":
            if let alg, alg != "ES256" { return "alg \(alg) is not ES256" }
            if jwk["crv"]?.stringValue != "P-256" { return "curve is not P-256" }
            if jwk["x"]?.stringValue == nil || jwk["y"]?.stringValue == nil { return "EC key without x and y" }
        case let other:
            return "key type \(other ?? "(none)") is not RSA or EC"
        }
        return nil
    }

    /// The key of a JWK that ``problem(withJWK:)`` passed; jwt-kit checks the numbers.
    private static func key(fromJWK jwk: JSONValue, kid: String?) -> Result<VerificationKey, any Error> {
        Result {
            if jwk["kty"]?.stringValue == "RSA" {
                let key = try Insecure.RSA.PublicKey(modulus: jwk["n"]?.stringValue ?? "", exponent: jwk["e"]?.stringValue ?? "")
                return VerificationKey(kid: kid, material: .rsa(try _RSA.Signing.PublicKey(pemRepresentation: key.pemRepresentation)))
            }
            let key = try ES256PublicKey(parameters: (x: jwk["x"]?.stringValue ?? "", y: jwk["y"]?.stringValue ?? ""))
            return VerificationKey(kid: kid, material: .p256(try P256.Signing.PublicKey(pemRepresentation: key.pemRepresentation)))
        }
    }
}
