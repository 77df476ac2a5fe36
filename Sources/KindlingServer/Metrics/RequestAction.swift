/// What a request asked for, the `action` label of `kindling_requests_total`: realtime actions
/// by name, REST reads and writes apart from them (they reach the namespace as the same
/// operations), the opening of an event stream, and an admin's reading, setting or simulating of
/// a namespace's rules (`/.settings/rules`).
enum RequestAction: Int, Sendable, CaseIterable {
    case listen, unlisten, get, set, update, push, transaction, ondisconnect, auth, stream
    case restRead, restWrite, rules

    var label: String {
        switch self {
        case .restRead: "rest_read"
        case .restWrite: "rest_write"
        default: "\(self)"
        }
    }

    /// The action of `operation` asked by `caller`; nil for the acknowledgements (stats, App
    /// Check) that decide nothing.
    init?(_ operation: Operation, by caller: Caller) {
        if case .rest = caller {
            switch operation {
            case .get: self = .restRead
            case .set, .update, .push: self = .restWrite
            default: return nil
            }
            return
        }
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
