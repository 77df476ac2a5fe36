import KindlingProtocol

/// Why a credential was refused, in the two statuses the Firebase SDKs act on.
public enum AuthRefusal: Error, Sendable, Equatable {
    /// Not a credential this server accepts (bad shape, signature, issuer, audience, time).
    case invalidToken(String)
    /// A verified token whose `exp` has passed: the SDKs refresh the token and reconnect.
    case expiredToken

    /// The status for a failed `auth` reply or an `ac` (auth revoked) message.
    public var status: WireStatus {
        switch self {
        case .invalidToken: .invalidToken
        case .expiredToken: .expiredToken
        }
    }

    /// The human-readable reason sent with the status.
    public var message: String {
        switch self {
        case .invalidToken(let reason): "Invalid token: \(reason)"
        case .expiredToken: "Auth token is expired."
        }
    }
}
