import KindlingCore
import KindlingProtocol

extension Refusal {
    /// The one place a refusal becomes a realtime response: its status string and the text the
    /// SDKs show (the JS SDK raises `PERMISSION_DENIED: Permission denied` from these).
    var wire: (status: WireStatus, message: String) {
        switch self {
        case .permissionDenied: return (.permissionDenied, "Permission denied")
        case .invalid(let error): return (WireStatus(error), error.message)
        case .dataStale: return (.dataStale, "The data changed since the transaction read it")
        case .preconditionFailed: return (.dataStale, "The data changed since it was read")
        case .unavailable(let message), .namespaceLimit(let message): return (.unavailable, message)
        case .unconfirmed: return (.unavailable, Namespace.unconfirmed)
        case .invalidRules(let message): return (.invalidData, message)
        case .limitExceeded(let message): return (.tooBig, message)
        case .invalidToken(let message): return (.invalidToken, message)
        case .expiredToken: return (.expiredToken, "Auth token is expired.")
        }
    }
}
