/// A message read back from a stream by sequence or as the last on a subject.
public struct StoredMessage: Sendable, Hashable {
    /// The subject it was published on.
    public var subject: String
    /// Its stream sequence.
    public var sequence: UInt64
    /// Its headers, nil when it had none.
    public var headers: NATSHeaders?
    /// Its payload.
    public var payload: [UInt8]
    /// When the stream stored it (RFC 3339, as the server writes it).
    public var time: String
}
