import KindlingCore

/// Everything a client can ask of a namespace, whichever transport carried it: the WebSocket
/// session, a REST request and an event stream all turn their messages into these, so the
/// namespace decides every request (rules, preconditions, limits) in one place.
enum Operation: Sendable {
    /// Start a listen; `wireQuery` is the query object exactly as the client sent it, kept so a
    /// revocation can name the listen the way the client identifies it.
    ///
    /// The cases with a query are boxed (`indirect`): a query is over a hundred bytes, and inline
    /// it would make every operation (every write's too) that large, copied at each step.
    indirect case listen(path: Path, query: Query, tag: Int?, hash: String, wireQuery: JSONValue?)
    indirect case unlisten(path: Path, query: Query)
    /// Read once (a realtime `g`, a REST GET).
    indirect case get(path: Path, query: Query)
    /// Replace the data at `path` (null removes it), if `precondition` still holds.
    case set(path: Path, data: JSONValue, precondition: Precondition?)
    /// A multi-path update relative to `path`.
    case update(path: Path, members: [JSONMember])
    /// Add `data` under a fresh push id below `path`.
    case push(path: Path, data: JSONValue)
    case onDisconnectSet(path: Path, data: JSONValue)
    case onDisconnectUpdate(path: Path, members: [JSONMember])
    case onDisconnectCancel(path: Path)
    /// Open a REST event stream at `path`, its events' data in `format` (`format=export`).
    indirect case openStream(path: Path, query: Query, format: JSONFormat)
    /// The connection now acts as `auth` (its credential already verified by the transport).
    case authenticate(AuthState)
    /// A credential the transport could not verify: refused by the namespace like any other
    /// request, so it is counted and logged with the rest. The connection's identity stays.
    case refuseCredential(Refusal)
    /// Requests that change nothing and are only acknowledged (stats, App Check), answered
    /// with `data` already encoded when there is any (`.info` reads, echo).
    case acknowledge(data: [UInt8]?)

    /// True for operations that change the data when they arrive, and so cannot be taken while
    /// storage is failing.
    var writesNow: Bool {
        switch self {
        case .set, .update, .push: return true
        default: return false
        }
    }

    /// True for reads, answered with the tree's data and changing none of it (a listen only
    /// registers): their answers can be dropped, and the client asked to read again.
    var isRead: Bool {
        switch self {
        case .get, .listen: return true
        default: return false
        }
    }

    /// Whether it changes a connection's queued onDisconnect writes, or the identity they run as.
    var changesRegistrations: Bool {
        switch self {
        case .onDisconnectSet, .onDisconnectUpdate, .onDisconnectCancel, .authenticate, .refuseCredential: return true
        default: return false
        }
    }

    /// True for onDisconnect writes: they write later, so a namespace that could not take a
    /// first write (the namespace cap) cannot take them either.
    var writesAtDisconnect: Bool {
        switch self {
        case .onDisconnectSet, .onDisconnectUpdate: return true
        default: return false
        }
    }
}

/// What a conditional write requires of the data it replaces.
enum Precondition: Sendable, Equatable {
    /// A transaction: the location's hash (any SDK variant) must be this one.
    case hash(String)
    /// REST `if-match`: the location's ETag must be this one.
    case etag(String)

    var isHash: Bool {
        if case .hash = self { return true }
        return false
    }
}
