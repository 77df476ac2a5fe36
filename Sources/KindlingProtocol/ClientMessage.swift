import KindlingCore

/// A message a client sent, after framing: a control message or a data request.
public enum ClientMessage: Sendable, Equatable {
    /// `{"t":"c","d":{"t":"p","d":{}}}`: answer with a pong.
    case ping
    /// Any other control message (long-poll upgrade chatter); ignored.
    case otherControl(String)
    /// `{"t":"d","d":{"r":N,"a":ACTION,"b":BODY}}`.
    case request(Request)
}

/// A data request: its number (echoed in the response; absent on some fire-and-forget actions)
/// and the action.
public struct Request: Sendable, Equatable {
    public var number: Int?
    public var action: Action

    public init(number: Int?, action: Action) {
        self.number = number
        self.action = action
    }
}

/// Every action a client can send, with its body decoded.
public enum Action: Sendable, Equatable {
    /// `s`: client statistics.
    case stats
    /// `auth` (a JWT) or `gauth` (any other token, such as the emulator's `owner`).
    case auth(AuthRequest)
    /// `unauth`: forget the credential.
    case unauth
    /// `appcheck` with a token.
    case appCheck(String)
    /// `unappeck` (sic, as the JS SDK spells it) or `unappcheck`.
    case unappCheck
    /// `q`: listen. Boxed, as are the other cases with a query (over a hundred bytes): inline,
    /// they would make every action that large.
    indirect case listen(ListenRequest)
    /// `n`: stop listening.
    indirect case unlisten(path: Path, query: Query)
    /// `p`: overwrite; with `hash`, a compare-and-set (a transaction).
    case put(path: Path, data: JSONValue, hash: String?)
    /// `m`: multi-path update.
    case merge(path: Path, data: [JSONMember])
    /// `o`: queue an overwrite for when the connection ends.
    case onDisconnectPut(path: Path, data: JSONValue)
    /// `om`: queue an update for when the connection ends.
    case onDisconnectMerge(path: Path, data: [JSONMember])
    /// `oc`: cancel what is queued at a path and below.
    case onDisconnectCancel(path: Path)
    /// `g`: read once, filtered by the query.
    indirect case get(path: Path, query: Query)
    /// `g` on `/.info/…`: client-local data the SDKs answer themselves; the server has none.
    case getInfo(String)
    /// `echo`: a test hook; answered with its data.
    case echo(JSONValue)
    /// An action Kindling does not know.
    case unknown(String)
}

/// The body of `auth` / `gauth`.
public struct AuthRequest: Sendable, Equatable {
    /// True for `gauth` (a non-JWT credential).
    public var isGoogleToken: Bool
    public var credential: String
    /// `authvar`: the Admin SDK's override of the rules' `auth` value.
    public var authOverride: JSONValue?
    /// `noauth`: the Admin SDK acting as an unauthenticated user.
    public var noAuth: Bool

    public init(isGoogleToken: Bool, credential: String, authOverride: JSONValue? = nil, noAuth: Bool = false) {
        self.isGoogleToken = isGoogleToken
        self.credential = credential
        self.authOverride = authOverride
        self.noAuth = noAuth
    }
}

/// The body of `q`.
public struct ListenRequest: Sendable, Equatable {
    public var path: Path
    public var query: Query
    /// The client's tag for a filtered query; its pushes must carry it.
    public var tag: Int?
    /// The hash of what the client already holds (`""` for nothing).
    public var hash: String
    /// The query object exactly as the client sent it (nil for none): a revocation must name
    /// the listen the way the client does.
    public var wireQuery: JSONValue?

    /// A listen as a client sends it: `wireQuery` defaults to the query's own wire form.
    public init(path: Path, query: Query, tag: Int?, hash: String, wireQuery: JSONValue? = nil) {
        self.path = path
        self.query = query
        self.tag = tag
        self.hash = hash
        if let wireQuery {
            self.wireQuery = wireQuery
        } else {
            // Spelled out: in a `cond ? nil : value` expression `nil` would be JSON null.
            self.wireQuery = query.isDefault ? JSONValue?.none : query.wireObject
        }
    }
}

extension Action {
    /// True for actions that change the data when they arrive (put and merge), as opposed to
    /// reads, listens and onDisconnect registrations.
    public var writesNow: Bool {
        switch self {
        case .put, .merge: return true
        default: return false
        }
    }
}
