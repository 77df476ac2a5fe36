/// What a request asked for, the `action` label of `kindling_requests_total`: realtime actions
/// by name, REST reads and writes apart from them (they reach the namespace as the same
/// operations), the opening of an event stream, an admin's reading, setting or simulating of a
/// namespace's rules (`/.settings/rules`), an admin's read of the past (`at=`, `changes=`), the queued onDisconnect writes that ran (apart
/// from `ondisconnect`, the queuing of one), and an admin's opening of a profiler stream.
///
/// A write a cluster follower forwards is counted on the leader under its client's action (a
/// realtime `set` is a `set`, a REST write a `rest_write`), and an onDisconnect write under its
/// own, whether its connection closed, its process crashed or its node died: never as a REST
/// write.
enum RequestAction: Int, Sendable, CaseIterable {
    case listen, unlisten, get, set, update, push, transaction, ondisconnect, auth, stream
    case restRead, restWrite, rules, history
    case ondisconnectSet, ondisconnectUpdate
    /// An admin's opening of a profiler stream (`/.settings/profile.json`).
    case profile

    var label: String {
        switch self {
        case .restRead: "rest_read"
        case .restWrite: "rest_write"
        case .ondisconnectSet: "ondisconnect_set"
        case .ondisconnectUpdate: "ondisconnect_update"
        default: "\(self)"
        }
    }

    /// The action of `operation` asked by `caller`; nil for the acknowledgements (stats, App
    /// Check) that decide nothing.
    init?(_ operation: Operation, by caller: Caller) {
        switch caller {
        case .rest, .forwarded(.rest, _): self.init(rest: operation)
        case .onDisconnect, .forwarded(.onDisconnect, _): self.init(onDisconnect: operation)
        case .realtime, .stream, .forwarded(.realtime, _): self.init(realtime: operation)
        }
    }

    private init?(rest operation: Operation) {
        switch operation {
        case .get: self = .restRead
        case .set, .update, .push: self = .restWrite
        default: return nil
        }
    }

    /// A queued onDisconnect write runs as a set (`onDisconnect().set`, `remove`) or an update.
    private init?(onDisconnect operation: Operation) {
        switch operation {
        case .set: self = .ondisconnectSet
        case .update: self = .ondisconnectUpdate
        default: return nil
        }
    }

    private init?(realtime operation: Operation) {
        switch operation {
        case .listen: self = .listen
        case .unlisten: self = .unlisten
        case .get: self = .get
        case .set(_, _, .hash?): self = .transaction
        case .set: self = .set
        case .update: self = .update
        case .push: self = .push
        case .onDisconnectSet, .onDisconnectUpdate, .onDisconnectCancel: self = .ondisconnect
        case .openStream: self = .stream
        case .authenticate, .refuseCredential: self = .auth
        case .acknowledge: return nil
        }
    }
}
