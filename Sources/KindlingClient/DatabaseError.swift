/// Why a database operation failed.
public enum DatabaseError: Error, Sendable, Equatable {
    /// The server refused a request: its status (`invalid_data`, `permission_denied`, …) and text.
    case server(status: String, message: String)
    /// A path or value the client could not accept before sending it.
    case invalidArgument(String)
    /// A transaction kept meeting changed data and gave up (after 25 tries).
    case maxRetries
    /// The operation was cancelled because the database was shut down.
    case disconnected
}
