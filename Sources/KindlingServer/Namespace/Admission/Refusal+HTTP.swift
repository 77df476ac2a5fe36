import KindlingCore
import NIOHTTP1

extension Refusal {
    /// The one place a refusal becomes an HTTP status and `{"error": …}` text. Rules denials are
    /// 401 `Permission denied`, as the hosted service answers (firebase-admin raises
    /// `UnauthenticatedError` for it). firebase-admin resends a 500 or a 503 up to four times,
    /// even a POST: 503 is only for refusals where nothing was written, and nothing is a 500.
    var http: (status: HTTPResponseStatus, message: String) {
        switch self {
        case .permissionDenied: return (.unauthorized, "Permission denied")
        case .invalid(let error): return (RESTError(error).status, error.message)
        case .dataStale, .preconditionFailed: return (.preconditionFailed, "The data changed since it was read")
        case .unavailable(let message): return (.serviceUnavailable, message)
        // 504: the write's outcome is unknown, and a resent POST could push it twice.
        case .unconfirmed: return (.gatewayTimeout, Namespace.unconfirmed)
        // 507: the server is full, which a retry (firebase-admin retries 503s) does not change.
        case .namespaceLimit(let message): return (.insufficientStorage, message)
        case .invalidRules(let message): return (.badRequest, message)
        case .limitExceeded(let message): return (.payloadTooLarge, message)
        case .invalidToken(let message): return (.unauthorized, message)
        case .expiredToken: return (.unauthorized, "Auth token is expired.")
        }
    }
}
