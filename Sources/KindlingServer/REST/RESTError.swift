import KindlingCore
import NIOHTTP1

/// Why a REST request was refused, and the one place a refusal becomes an HTTP status.
///
/// The body is always `{"error": message}`: firebase-admin turns the status into its exception
/// class and `error` into the exception's message. Validation failures from the core keep their
/// message, which names the offending key, path or value. firebase-admin resends a 500 or a
/// 503 up to four times, even a POST: none is a 500, and a 503 says nothing was written.
struct RESTError: Error, Sendable {
    enum Kind: Sendable {
        /// The core refused a path, key, value, update or query.
        case invalid(ValidationError.Kind)
        /// A write with no body.
        case noData
        /// A PATCH body that is not a JSON object, or a parameter that does not parse.
        case badRequest
        /// A URI that is not `<path>.json` (and not one of the server's own endpoints).
        case notFound
        /// A method the REST API does not have.
        case methodNotAllowed
        /// A body over the REST size limit.
        case bodyTooLarge
        /// The server cannot take the request now (it is shutting down); nothing was done.
        case unavailable
        /// Refused as the namespace would refuse it (its status is the refusal's).
        case refused(Refusal)
        /// A JSONP request from a page the browser policy does not allow.
        case forbidden
    }

    let kind: Kind
    let message: String

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    init(_ error: ValidationError) {
        self.init(.invalid(error.kind), error.message)
    }

    /// A refusal met before the namespace was reached (a credential that did not verify).
    init(refusal: Refusal) {
        self.init(.refused(refusal), refusal.http.message)
    }

    var status: HTTPResponseStatus {
        switch kind {
        case .invalid(let kind):
            switch kind {
            case .invalidKey, .keyTooLong, .invalidPath, .tooDeep, .stringTooLong, .invalidNumber, .invalidPriority,
                .invalidServerValue, .invalidData, .invalidUpdate, .invalidJSON, .invalidQuery:
                return .badRequest
            }
        case .noData, .badRequest: return .badRequest
        case .notFound: return .notFound
        case .methodNotAllowed: return .methodNotAllowed
        case .bodyTooLarge: return .payloadTooLarge
        case .unavailable: return .serviceUnavailable
        case .refused(let refusal): return refusal.http.status
        case .forbidden: return .forbidden
        }
    }
}
