/// Who asks, for every source a request reaches a namespace from, each with the identity its
/// transport verified (a realtime connection acts as whatever it last authenticated as).
///
/// Named per source so the namespace decides a request as that source may ask it (only a
/// realtime connection listens; a one-off REST answer carries the written location for its
/// ETag), and counts it once, under its real action (`RequestAction`): a write a follower
/// forwards is counted on the leader as its client's action, and an onDisconnect write as one,
/// wherever and whenever it runs.
enum Caller: Sendable {
    case realtime(ConnectionID)
    case stream(ConnectionID, AuthState)
    case rest(AuthState)
    /// A write a cluster follower took from one of its clients and sent to this node, its
    /// namespace's leader (or decides itself once it leads); `origin` is how it came to the
    /// follower.
    case forwarded(ForwardedWrite.Origin, AuthState)
    /// A queued onDisconnect write running as the identity that queued it.
    case onDisconnect(OnDisconnectRun, AuthState)

    /// Why a connection's queued onDisconnect writes run.
    enum OnDisconnectRun: Sendable, Equatable {
        /// The connection closed on this node.
        case close(ConnectionID)
        /// The process that held the connection died: run at the next start, from the
        /// registrations it left on disk.
        case crash
        /// The cluster node that held the connection died: run by the namespace's leader, from
        /// the registrations the node kept in NATS.
        case deadNode
    }

    /// The realtime connection or event stream that asks, if any (a closing connection's
    /// onDisconnect writes name it too), for the log.
    var connection: ConnectionID? {
        switch self {
        case .realtime(let connection), .stream(let connection, _), .onDisconnect(.close(let connection), _): connection
        case .rest, .forwarded, .onDisconnect: nil
        }
    }

    /// How a write of this caller comes to the leader when this node forwards it; nil for the
    /// callers whose writes are never forwarded (event streams write nothing; a forwarded write
    /// is the leader's to decide).
    var forwardedOrigin: ForwardedWrite.Origin? {
        switch self {
        case .realtime: .realtime
        case .rest: .rest
        case .onDisconnect: .onDisconnect
        case .stream, .forwarded: nil
        }
    }
}
