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
    /// Bytes of answers (reads, listens' first data) one realtime connection's batch of
    /// requests may bring: a few bytes of `g` can ask for megabytes, and a batch of them could
    /// build more than the server has memory for before any is sent. Once a batch's answers are
    /// past it the connection is closed and the rest of its batch left (one answer alone may be
    /// larger); the server sets it to the connection's limit on waiting bytes, which the answers
    /// would mostly exceed at their flush anyway.
    public var maxAnswerBytes: Int
    /// Children the queries (gets and new query listens) of one realtime connection's batch of
    /// requests may read one by one, where no index answers them: a few bytes of `g` can ask
    /// for a scan of a million children, and a batch of them would hold the namespace, and
    /// every other client of it, for minutes. A query past it is refused with `too_big` (one
    /// query alone may scan more). About a second of scanning.
    public var maxScannedChildren: Int

    public init(
        maxListens: Int = 10_000, maxOnDisconnectOperations: Int = 1_000, maxOnDisconnectBytes: Int = 16 * 1024 * 1024, maxWriteBytes: Int = .max,
        maxAnswerBytes: Int = 64 * 1024 * 1024, maxScannedChildren: Int = 10_000_000
    ) {
        self.maxScannedChildren = maxScannedChildren
        self.maxListens = maxListens
        self.maxOnDisconnectOperations = maxOnDisconnectOperations
        self.maxOnDisconnectBytes = maxOnDisconnectBytes
        self.maxWriteBytes = maxWriteBytes
        self.maxAnswerBytes = maxAnswerBytes
    }
}
