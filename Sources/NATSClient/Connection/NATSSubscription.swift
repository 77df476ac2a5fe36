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
    /// Messages the server sent meanwhile are dropped.
    public func unsubscribe() async {
        await client.unsubscribe(sid: sid)
    }

    /// Stops interest without losing a message the server sent: sends UNSUB and ends the
    /// sequence once the server confirms it has delivered everything it sent before (a PING's
    /// PONG). For a responder that must answer every request it was sent before it stops.
    public func drain() async {
        await client.drain(sid: sid)
    }
}
