/// A message delivered by a consumer, with the stream sequence that orders it.
public struct JetStreamMessage: Sendable, Hashable {
    /// The subject it was published on.
    public var subject: String
    /// Its sequence in the stream (the follower's replay position).
    public var streamSequence: UInt64
    /// Its headers.
    public var headers: NATSHeaders?
    /// Its payload.
    public var payload: [UInt8]
    /// How many messages the consumer still had to deliver after this one when it was sent.
    public var pending: UInt64
}
