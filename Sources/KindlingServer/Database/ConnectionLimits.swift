/// What one realtime connection may hold on the server, so no client can grow the server's
/// memory without bound through listens or queued onDisconnect writes.
public struct ConnectionLimits: Sendable {
    /// Listens at once (distinct path and query pairs).
    public var maxListens: Int
    /// onDisconnect operations queued at once.
    public var maxOnDisconnectOperations: Int
    /// Bytes of onDisconnect data queued at once (as the client sent it, in JSON).
    public var maxOnDisconnectBytes: Int
    /// Bytes of one write as stored (its record's JSON). Unbounded on one server, where the
    /// message size limits bound writes; in cluster mode a record must fit in one NATS message.
    public var maxWriteBytes: Int

    public init(
        maxListens: Int = 10_000, maxOnDisconnectOperations: Int = 1_000, maxOnDisconnectBytes: Int = 16 * 1024 * 1024, maxWriteBytes: Int = .max
    ) {
        self.maxListens = maxListens
        self.maxOnDisconnectOperations = maxOnDisconnectOperations
        self.maxOnDisconnectBytes = maxOnDisconnectBytes
        self.maxWriteBytes = maxWriteBytes
    }
}
