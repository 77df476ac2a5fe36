/// The server's INFO: what the connection may send (max_payload, headers) and where else the
/// cluster can be reached (connect_urls), which the client adds to its reconnect list.
public struct NATSServerInfo: Sendable, Hashable, Decodable {
    /// The server's unique id.
    public var serverID: String
    /// The configured server name (used by JetStream cluster info to name leaders).
    public var serverName: String?
    /// The server's version string.
    public var version: String
    /// The largest message (headers plus payload) the server accepts.
    public var maxPayload: Int
    /// Whether the server understands HPUB/HMSG.
    public var headers: Bool
    /// Other client URLs of the cluster ("host:port"), advertised for failover.
    public var connectURLs: [String]
    /// Whether JetStream is enabled on this server.
    public var jetStream: Bool
    /// Set when the server is entering lame-duck mode and clients should move elsewhere.
    public var lameDuckMode: Bool

    private enum CodingKeys: String, CodingKey {
        case serverID = "server_id"
        case serverName = "server_name"
        case version
        case maxPayload = "max_payload"
        case headers
        case connectURLs = "connect_urls"
        case jetStream = "jetstream"
        case lameDuckMode = "ldm"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        serverID = try c.decodeIfPresent(String.self, forKey: .serverID) ?? ""
        serverName = try c.decodeIfPresent(String.self, forKey: .serverName)
        version = try c.decodeIfPresent(String.self, forKey: .version) ?? ""
        maxPayload = try c.decodeIfPresent(Int.self, forKey: .maxPayload) ?? 1_048_576
        headers = try c.decodeIfPresent(Bool.self, forKey: .headers) ?? false
        connectURLs = try c.decodeIfPresent([String].self, forKey: .connectURLs) ?? []
        jetStream = try c.decodeIfPresent(Bool.self, forKey: .jetStream) ?? false
        lameDuckMode = try c.decodeIfPresent(Bool.self, forKey: .lameDuckMode) ?? false
    }
}
