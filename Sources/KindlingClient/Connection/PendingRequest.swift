import KindlingCore
import KindlingProtocol
import KindlingSync

/// How the response to a request in flight is routed.
enum PendingRequest: Sendable {
    /// A user write; the response acknowledges (or reverts) it in the sync tree.
    case write(writeID: Int)
    /// A server listen; `ok` completes it, an error cancels it.
    case listen(ServerListen)
    /// Anything else: the caller is waiting for the result.
    case request(QueuedRequest)
    /// The connection's credential; its answer decides every `authenticate` waiting for it.
    case auth(credential: String)
}

/// A request made while offline (or in flight when the connection dropped), sent on connect.
struct QueuedRequest: Sendable {
    var action: Action
    /// The caller's handle on it, to cancel it or to fail it offline (0 for the client's own).
    var id = 0
    /// A read that fails as offline when no connection takes it within the connect timeout.
    var expiresOffline = false
    var completion: @Sendable (Result<JSONValue, DatabaseError>) -> Void
}
