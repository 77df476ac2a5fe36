import KindlingCore

/// A message the server sent, as a client reads it: the typed counterpart of what
/// `ServerMessage` writes, so the SDK and the test client never pick envelopes apart by hand.
public enum ServerEnvelope: Sendable, Equatable {
    /// `{"t":"c","d":{"t":"h","d":{…}}}`: the server's hello.
    case handshake(ServerHandshake)
    /// `{"t":"c","d":{"t":"o","d":{}}}`: the answer to a ping.
    case pong
    /// Another control message (`s` shutdown, `r` reset, `e` error): its type and data.
    case otherControl(type: String, data: JSONValue)
    /// `{"t":"d","d":{"r":N,"b":{"s":STATUS,"d":DATA}}}`: the answer to request `N`.
    case response(ServerResponse)
    /// `{"t":"d","d":{"a":ACTION,"b":BODY}}`: something the server pushes unasked.
    case push(ServerPush)
}

/// The handshake's data: the server's clock, protocol version, host and session id.
public struct ServerHandshake: Sendable, Equatable {
    /// The server's time in milliseconds since 1970, when it sent one.
    public var timestamp: Double?
    public var version: String?
    public var host: String?
    public var session: String?

    public init(timestamp: Double?, version: String?, host: String?, session: String?) {
        self.timestamp = timestamp
        self.version = version
        self.host = host
        self.session = session
    }
}

/// A response: which request it answers, its status and its data.
public struct ServerResponse: Sendable, Equatable {
    public var number: Int
    /// `ok`, or an error status such as `permission_denied` (not limited to `WireStatus`: a
    /// client must carry whatever a server says).
    public var status: String
    public var data: JSONValue

    public init(number: Int, status: String, data: JSONValue) {
        self.number = number
        self.status = status
        self.data = data
    }

    public var isOK: Bool { status == WireStatus.ok.rawValue }
}

/// The pushes a server sends.
public enum ServerPush: Sendable, Equatable {
    /// `d`: the data at `path` is now `data`; a tag routes it to one filtered listen.
    case overwrite(path: Path, data: JSONValue, tag: Int?)
    /// `m`: the children named by relative paths changed.
    case merge(path: Path, data: [JSONMember], tag: Int?)
    /// `c`: the server cancelled the listens at `path` (read access lost).
    case listenRevoked(path: Path, query: JSONValue?)
    /// `ac`: the connection's credential is no longer valid.
    case authRevoked(status: String, reason: String)
    /// An action this client does not know (security debug output, app check revocation, …).
    case unknown(String)
}
