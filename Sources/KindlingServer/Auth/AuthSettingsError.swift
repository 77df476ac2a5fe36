/// A key or setting in ``AuthSettings`` that cannot be used; each case names which one, so the
/// operator can fix the right entry.
public enum AuthSettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `hmacSecrets[index]` is shorter than the 32 bytes an HS256 key needs.
    case hmacSecretTooShort(index: Int)
    /// `adminSecrets[index]` is shorter than 16 bytes (easy to guess).
    case adminSecretTooShort(index: Int)
    /// `publicKeyPEMs[index]` is neither an RSA (2048 bits or more) nor a P-256 public key or
    /// certificate.
    case unreadablePublicKey(index: Int, reason: String)
    /// `jwks[index]` is not a JSON Web Key Set document.
    case unreadableKeySet(index: Int, reason: String)
    /// Key `key` of `jwks[index]` (with its `kid`, if any) cannot verify RS256 or ES256.
    case unusableKey(index: Int, key: Int, kid: String?, reason: String)
    /// `firebaseProjectID` is empty.
    case emptyProjectID
    /// `clockSkew` is negative or over a day.
    case clockSkewOutOfRange

    /// A sentence for the start-up error.
    public var description: String {
        switch self {
        case .hmacSecretTooShort(let index):
            "auth: hmacSecrets[\(index)] is shorter than 32 bytes (HS256 needs a 256-bit key)"
        case .adminSecretTooShort(let index):
            "auth: adminSecrets[\(index)] is shorter than 16 bytes"
        case .unreadablePublicKey(let index, let reason):
            "auth: publicKeyPEMs[\(index)] is not a usable RSA or P-256 public key or certificate: \(reason)"
        case .unreadableKeySet(let index, let reason):
            "auth: jwks[\(index)] is not a JSON Web Key Set: \(reason)"
        case .unusableKey(let index, let key, let kid, let reason):
            "auth: jwks[\(index)] key \(key)\(kid.map { " (kid \"\($0)\")" } ?? "") is not usable: \(reason)"
        case .emptyProjectID:
            "auth: firebaseProjectID is empty"
        case .clockSkewOutOfRange:
            "auth: clockSkew must be between 0 and 24 hours"
        }
    }
}
