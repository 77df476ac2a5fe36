/// The changes to one key, in revision order, as an AsyncSequence of entries.
public struct KeyValueWatch: AsyncSequence, Sendable {
    public typealias Element = KeyValueEntry

    private let bucket: String
    private let key: String
    private let consumer: OrderedConsumer

    init(bucket: String, key: String, consumer: OrderedConsumer) {
        self.bucket = bucket
        self.key = key
        self.consumer = consumer
    }

    /// Iterates entries as they arrive.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<JetStreamMessage>.Iterator
        let bucket: String
        let key: String

        public mutating func next() async -> KeyValueEntry? {
            guard let message = await base.next() else { return nil }
            return KeyValue.entry(bucket: bucket, key: key, headers: message.headers, payload: message.payload, revision: message.streamSequence)
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: consumer.makeAsyncIterator(), bucket: bucket, key: key)
    }

    /// Stops watching.
    public func stop() async {
        await consumer.stop()
    }
}
