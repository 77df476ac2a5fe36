import NIOCore

/// A handle on one Redis connection from async code.
public struct RedisLink: Sendable {
    let channel: any Channel
    let connection: NIOLoopBound<RedisConnection>

    public func close() async {
        try? await channel.close()
    }
}
