/// The kind of one profiler record, named as the Firebase CLI's `database:profile` reads them:
/// its report sorts records into its tables by these names.
enum ProfileOperation: String, Sendable {
    /// A realtime connection opened (WebSocket or long-polling).
    case concurrentConnect = "concurrent-connect"
    /// A realtime connection closed (its queued onDisconnect writes ran then).
    case concurrentDisconnect = "concurrent-disconnect"
    /// A realtime `get` (`once` on an SDK that asks the server).
    case realtimeRead = "realtime-read"
    /// A realtime set or push (a delete writes null).
    case realtimeWrite = "realtime-write"
    /// A realtime multi-path update.
    case realtimeUpdate = "realtime-update"
    /// A realtime transaction's conditional set (each retry is one).
    case realtimeTransaction = "realtime-transaction"
    /// A listen, realtime or a REST event stream: the location's data sent first.
    case listenerListen = "listener-listen"
    /// A write's changes sent to the listeners of what it changed (none is still one).
    case listenerBroadcast = "listener-broadcast"
    /// A realtime listen ended by its client.
    case listenerUnlisten = "listener-unlisten"
    /// A REST GET.
    case restRead = "rest-read"
    /// A REST PUT, POST or DELETE.
    case restWrite = "rest-write"
    /// A REST PATCH.
    case restUpdate = "rest-update"

    /// The record name of `operation` asked by `caller`; nil for what the profiler does not
    /// report (onDisconnect registrations, identities, acknowledgements). A write a cluster
    /// follower forwards is named as its client asked it; a queued onDisconnect write that runs
    /// is a realtime write of its connection.
    init?(_ operation: Operation, by caller: Caller) {
        let rest: Bool
        switch caller {
        case .rest, .forwarded(.rest, _): rest = true
        case .realtime, .stream, .onDisconnect, .forwarded: rest = false
        }
        switch operation {
        case .get: self = rest ? .restRead : .realtimeRead
        case .set(_, _, .hash?): self = .realtimeTransaction
        case .set, .push: self = rest ? .restWrite : .realtimeWrite
        case .update: self = rest ? .restUpdate : .realtimeUpdate
        case .listen, .openStream: self = .listenerListen
        case .unlisten: self = .listenerUnlisten
        case .onDisconnectSet, .onDisconnectUpdate, .onDisconnectCancel, .authenticate, .refuseCredential, .acknowledge: return nil
        }
    }
}
