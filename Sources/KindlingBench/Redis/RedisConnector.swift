import NIOCore
import NIOPosix

/// Opens Redis connections whose behaviour is made on the connection's own event loop.
public struct RedisConnector: Sendable {
    public let target: BenchTarget
    public let group: any EventLoopGroup

    public init(target: BenchTarget, group: any EventLoopGroup) {
        self.target = target
        self.group = group
    }

    public func connect(
        from source: String? = nil,
        _ makeBehaviour: @escaping @Sendable (any EventLoop) -> any RedisBehaviour
    ) async throws -> RedisLink {
        let loop = group.next()
        let opened = loop.makePromise(of: NIOLoopBound<RedisConnection>.self)
        let channel: any Channel
        do {
            channel = try await BenchBootstrap.make(on: loop, from: source)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            RedisConnection(behaviour: makeBehaviour(channel.eventLoop), opened: opened)
                        )
                    }
                }
                .connect(host: target.host, port: target.port)
                .get()
        } catch {
            // No connection will ever report itself open: fail the promise, or it leaks.
            opened.fail(error)
            throw error
        }
        return RedisLink(channel: channel, connection: try await BenchBootstrap.ready(opened.futureResult, on: channel))
    }
}
