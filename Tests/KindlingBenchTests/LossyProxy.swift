import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// A deliberately broken server for the invariant checks: a WebSocket proxy in front of a real
/// Kindling server that forwards every frame both ways, except that it answers every
/// `dropEvery`-th transaction put (a `p` carrying `"h"`, counted over all its connections) with `ok` itself and never forwards it:
/// an acknowledged update that is lost.
final class LossyProxy: Sendable {
    let port: Int
    private let listener: any Channel

    private init(port: Int, listener: any Channel) {
        self.port = port
        self.listener = listener
    }

    static func start(upstreamPort: Int, dropEvery: Int) async throws -> LossyProxy {
        let transactions = TransactionCount()
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let upgrader = NIOWebSocketServerUpgrader(
                    shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
                    upgradePipelineHandler: { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(
                                ProxyDownstream(upstreamPort: upstreamPort, dropEvery: dropEvery, transactions: transactions))
                        }
                    }
                )
                return channel.pipeline.configureHTTPServerPipeline(
                    withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in })
                )
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return LossyProxy(port: listener.localAddress?.port ?? 0, listener: listener)
    }

    func stop() async {
        try? await listener.close()
    }
}
