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
}

/// A request made while offline (or in flight when the connection dropped), sent on connect.
struct QueuedRequest: Sendable {
    var action: Action
    var completion: @Sendable (Result<JSONValue, DatabaseError>) -> Void
}
