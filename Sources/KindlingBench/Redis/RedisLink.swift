import NIOCore

/// A handle on one Redis connection from async code.
public struct RedisLink: Sendable {
    let channel: any Channel
    let connection: NIOLoopBound<RedisConnection>

    /// Gives the behaviour its go signal on the event loop.
    public func start() {
        channel.eventLoop.execute { [connection] in connection.value.start() }
    }

    public func close() async {
        try? await channel.close()
    }
}
