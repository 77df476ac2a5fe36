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
        var bootstrap = ClientBootstrap(group: loop)
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(30))
        if let source {
            bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0))
        }
        let channel = try await bootstrap
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        RedisConnection(behaviour: makeBehaviour(channel.eventLoop), opened: opened)
                    )
                }
            }
            .connect(host: target.host, port: target.port)
            .get()
        do {
            return RedisLink(channel: channel, connection: try await opened.futureResult.get())
        } catch {
            try? await channel.close()
            throw error
        }
    }
}
