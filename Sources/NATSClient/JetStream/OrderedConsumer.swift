/// An in-order, gap-free, duplicate-free reader of a stream from a start sequence: what a follower
/// replaying a leader's log needs. It is push based: one ephemeral consumer streams to an inbox,
/// so there is no per-batch request and its latency is one hop; every message's reply subject
/// carries the consumer sequence, so a gap is seen on the next message (or the next heartbeat),
/// and the consumer is then recreated from the last delivered stream sequence plus one. A
/// reconnect or missed heartbeats (a lost consumer) do the same.
public struct OrderedConsumer: AsyncSequence, Sendable {
    public typealias Element = JetStreamMessage

    private let engine: OrderedConsumerEngine
    private let stream: AsyncStream<JetStreamMessage>

    init(jetStream: JetStream, stream name: String, startSequence: UInt64, filterSubject: String?, heartbeat: Duration) async throws(JetStreamError) {
        let (stream, continuation) = AsyncStream.makeStream(of: JetStreamMessage.self)
        self.stream = stream
        let engine = OrderedConsumerEngine(
            jetStream: jetStream, stream: name, startSequence: startSequence, filterSubject: filterSubject, heartbeat: heartbeat, output: continuation
        )
        self.engine = engine
        continuation.onTermination = { _ in Task { await engine.stop() } }
        try await engine.start()
    }

    public func makeAsyncIterator() -> AsyncStream<JetStreamMessage>.Iterator {
        stream.makeAsyncIterator()
    }

    /// Stops reading and deletes the server-side consumer; the sequence ends.
    public func stop() async {
        await engine.stop()
    }

    /// How many times the server-side consumer was (re)created, for tests and metrics.
    public var consumersCreated: Int {
        get async { await engine.consumersCreated }
    }
}
