import KindlingCore

/// The status strings of responses (`{"s": …}`), and the one place where Kindling's errors become
/// them.
public enum WireStatus: String, Sendable {
    case ok
    /// A transaction's hash did not match the data: nothing was written.
    case dataStale = "datastale"
    case permissionDenied = "permission_denied"
    case invalidToken = "invalid_token"
    case expiredToken = "expired_token"
    /// A request or message over a size limit.
    case tooBig = "too_big"
    /// The server cannot take the request now (for example, storage is failing).
    case unavailable
    /// A bad key, path or path depth.
    case invalidPath = "invalid_path"
    /// A bad value: shape, number, string size, priority or server value.
    case invalidData = "invalid_data"
    /// A bad query object.
    case invalidQuery = "invalid_query"
    /// An action Kindling does not know.
    case unknownAction = "unknown_action"

    /// The status a validation failure is answered with.
    public init(_ error: ValidationError) {
        switch error.kind {
        case .invalidKey, .keyTooLong, .invalidPath, .tooDeep: self = .invalidPath
        case .stringTooLong, .invalidNumber, .invalidPriority, .invalidServerValue, .invalidData, .invalidUpdate, .invalidJSON:
            self = .invalidData
        case .invalidQuery: self = .invalidQuery
        }
    }
}
