/// How to connect and how hard to try again. The defaults favour quick failover (a lease-holding
/// leader must notice a dead server within a second or two) over sparing the servers.
public struct NATSOptions: Sendable {
    /// Server URLs to try in order (`nats://host:port`); INFO's connect_urls are added as learned.
    public var servers: [String]
    /// The connection name the server shows in its monitoring.
    public var name: String?
    /// Optional user and password for CONNECT.
    public var user: String?
    /// The password that goes with `user`.
    public var password: String?
    /// Optional auth token for CONNECT.
    public var token: String?
    /// How long a TCP connect plus INFO/CONNECT/PING/PONG handshake may take.
    public var connectTimeout: Duration = .seconds(2)
    /// The first wait after a full pass over the servers failed; doubles each pass up to `maxReconnectWait`.
    public var reconnectWait: Duration = .milliseconds(100)
    /// The longest wait between passes.
    public var maxReconnectWait: Duration = .seconds(2)
    /// Passes over the server list before giving up and closing; nil tries forever (until `close`).
    public var maxReconnectPasses: Int?
    /// Messages buffered per subscription before new ones are dropped (a slow consumer).
    public var pendingMessageLimit: Int = 65_536
    /// How often the client PINGs a connection that is up, so a stalled one (open, but nothing
    /// crosses it) is found: with `maxPingsOut` PINGs unanswered the client closes it and tries
    /// the servers again. Nil sends none (a stalled connection then lasts until the server's
    /// own ping timeout, two minutes by default).
    public var pingInterval: Duration? = .seconds(2)
    /// Unanswered keep-alive PINGs after which the connection counts as stalled.
    public var maxPingsOut: Int = 2

    /// Options for the given servers with the defaults above.
    public init(servers: [String]) {
        self.servers = servers
    }
}
