/// Where the repo's one connection is in its life. A single enum, so no combination of flags can
/// describe an impossible state (connected but also waiting to retry, for instance).
enum ConnectionState: Sendable {
    /// Not connected; a reconnect is scheduled (or about to be) after `attempt` failures in a row.
    case waiting(attempt: Int)
    /// A socket is being opened; frames from any other connection id are stale.
    case connecting(id: Int, attempt: Int)
    /// The handshake arrived; requests flow.
    case connected(WebSocketConnection)
    /// `goOffline` was called: no connection and no retries until `goOnline`.
    case offline

    /// The id of the socket this state is about, if any.
    var connectionID: Int? {
        switch self {
        case .connecting(let id, _): return id
        case .connected(let connection): return connection.id
        case .waiting, .offline: return nil
        }
    }

    var connection: WebSocketConnection? {
        if case .connected(let connection) = self { return connection }
        return nil
    }
}
