import Foundation

/// Why a database operation failed.
public enum DatabaseError: Error, Sendable, Equatable {
    /// The server refused a request: its status (`invalid_data`, `permission_denied`, …), its
    /// text, and what was refused (`operation`, such as `set` or `listen`, at `path`), so a
    /// developer sees which call of many failed.
    case server(status: String, message: String, operation: String = "", path: String = "")
    /// A path or value the client could not accept before sending it.
    case invalidArgument(String)
    /// A transaction kept meeting changed data and gave up (after 25 tries).
    case maxRetries
    /// The operation was cancelled because the database was shut down.
    case disconnected
    /// A read or an authentication found no connection within the connect timeout (3 s, as the
    /// Firebase SDKs wait), and no data a listener holds could answer it.
    case offline(operation: String, path: String)
    /// The task awaiting the operation was cancelled, or a later call replaced it (a newer
    /// `authenticate`) before the server decided it.
    case cancelled(operation: String, path: String)
}

extension DatabaseError: LocalizedError {
    /// What went wrong, where, and what the server said, in one sentence for a log or an alert.
    public var errorDescription: String? {
        switch self {
        case .server(let status, let message, let operation, let path):
            let what = operation.isEmpty ? "The request" : "\(operation.prefix(1).uppercased())\(operation.dropFirst())"
            let place = path.isEmpty ? "" : " at \(path)"
            let detail = message.isEmpty || message == status ? "" : ": \(message)"
            return "\(what)\(place) was refused (\(status))\(detail)"
        case .invalidArgument(let message):
            return "Invalid argument: \(message)"
        case .maxRetries:
            return "The transaction gave up after 25 tries: the data kept changing under it"
        case .disconnected:
            return "The database was shut down before the operation finished"
        case .offline(let operation, let path):
            return "The client is offline: \(operation) at \(path) found no connection and no cached data"
        case .cancelled(let operation, let path):
            return "\(operation.prefix(1).uppercased())\(operation.dropFirst()) at \(path) was cancelled"
        }
    }

    /// The server's status for a refusal (`permission_denied`, …), nil for the client's own errors.
    public var serverStatus: String? {
        if case .server(let status, _, _, _) = self { return status }
        return nil
    }
}
