/// Where the repo's one connection is in its life. A single enum, so no combination of flags can
/// describe an impossible state (connected but also waiting to retry, for instance).
enum ConnectionState: Sendable, Equatable {
    /// Not connected; a reconnect is scheduled (or about to be) after `attempt` failures in a row.
    case waiting(attempt: Int)
    /// A socket is being opened; frames from any other connection id are stale.
    case connecting(id: Int, attempt: Int)
    /// The handshake arrived on socket `id`; requests flow.
    case connected(id: Int)
    /// `goOffline` (or `shutdown`) was called: no connection and no retries until `goOnline`.
    case offline

    /// The id of the socket this state is about, if any.
    var connectionID: Int? {
        switch self {
        case .connecting(let id, _), .connected(let id): return id
        case .waiting, .offline: return nil
        }
    }

    /// The socket requests go out on: set only once the handshake arrived.
    var connectedID: Int? {
        if case .connected(let id) = self { return id }
        return nil
    }
}
