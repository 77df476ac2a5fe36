/// The messages of one SUB, as an AsyncSequence. It ends when unsubscribed, when the client
/// closes or drains; the subscription survives reconnects (the client sends SUB again).
public struct NATSSubscription: AsyncSequence, Sendable {
    public typealias Element = NATSMessage

    /// The subject (possibly with wildcards) subscribed to.
    public let subject: String
    let sid: UInt64
    let client: NATSClient
    let stream: AsyncStream<NATSMessage>

    public func makeAsyncIterator() -> AsyncStream<NATSMessage>.Iterator {
        stream.makeAsyncIterator()
    }

    /// Stops interest: sends UNSUB and ends the sequence after what is already buffered.
    public func unsubscribe() async {
        await client.unsubscribe(sid: sid)
    }
}
