/// Why a NATS call failed. A small closed set so callers can react (retry on `.timeout` or
/// `.notConnected`, give up on `.closed`), wrapped in a struct so cases can be added later.
public struct NATSError: Error, Hashable, CustomStringConvertible {
    private enum Base: Hashable {
        case notConnected
        case closed
        case connectionFailed
        case timeout
        case noResponders
        case maxPayloadExceeded
        case invalidSubject
        case invalidHeader
        case invalidURL
        case serverError
        case protocolError
    }

    private let base: Base
    /// What happened, for people and logs.
    public let detail: String

    private init(_ base: Base, _ detail: String) {
        self.base = base
        self.detail = detail
    }

    /// The connection is down and reconnecting; the call may succeed later.
    public static func notConnected(_ detail: String = "") -> Self { Self(.notConnected, detail) }
    /// The client was closed (or gave up reconnecting); nothing more will succeed.
    public static func closed(_ detail: String = "") -> Self { Self(.closed, detail) }
    /// No server in the list accepted a connection and handshake.
    public static func connectionFailed(_ detail: String = "") -> Self { Self(.connectionFailed, detail) }
    /// A request, flush or handshake did not complete in time.
    public static func timeout(_ detail: String = "") -> Self { Self(.timeout, detail) }
    /// The server answered a request with status 503: nobody subscribes to that subject.
    public static func noResponders(_ detail: String = "") -> Self { Self(.noResponders, detail) }
    /// The message (headers plus payload) is larger than the server's max_payload.
    public static func maxPayloadExceeded(_ detail: String = "") -> Self { Self(.maxPayloadExceeded, detail) }
    /// A subject or queue name that is empty or contains whitespace or control characters.
    public static func invalidSubject(_ detail: String = "") -> Self { Self(.invalidSubject, detail) }
    /// A header name or value that cannot be sent.
    public static func invalidHeader(_ detail: String = "") -> Self { Self(.invalidHeader, detail) }
    /// A server URL that is not `nats://host:port`.
    public static func invalidURL(_ detail: String = "") -> Self { Self(.invalidURL, detail) }
    /// The server sent -ERR.
    public static func serverError(_ detail: String = "") -> Self { Self(.serverError, detail) }
    /// The server sent bytes that break the protocol (the connection was closed).
    public static func protocolError(_ error: NATSProtocolError) -> Self { Self(.protocolError, error.description) }

    /// Errors compare by kind only; the detail is for people.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.base == rhs.base }
    public func hash(into hasher: inout Hasher) { hasher.combine(base) }

    public var description: String { detail.isEmpty ? "NATS error: \(base)" : "NATS error: \(base): \(detail)" }
}
