import KindlingClient
import KindlingCore
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// A deliberately broken server for the invariant checks: a WebSocket proxy in front of a real
/// Kindling server that forwards every frame both ways, except that it answers every
/// `dropEvery`-th transaction put (a `p` carrying `"h"`) with `ok` itself and never forwards it:
/// an acknowledged update that is lost.
final class LossyProxy: Sendable {
    let port: Int
    private let listener: any Channel

    private init(port: Int, listener: any Channel) {
        self.port = port
        self.listener = listener
    }

    static func start(upstreamPort: Int, dropEvery: Int) async throws -> LossyProxy {
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let upgrader = NIOWebSocketServerUpgrader(
                    shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
                    upgradePipelineHandler: { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(ProxyDownstream(upstreamPort: upstreamPort, dropEvery: dropEvery))
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

/// The client's side of one proxied connection.
private final class ProxyDownstream: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let upstreamPort: Int
    private let dropEvery: Int
    private var transactions = 0
    private var upstream: EventLoopFuture<any Channel>?

    init(upstreamPort: Int, dropEvery: Int) {
        self.upstreamPort = upstreamPort
        self.dropEvery = dropEvery
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let downstream = context.channel
        let ready = context.eventLoop.makePromise(of: (any Channel).self)
        let host = "127.0.0.1:\(upstreamPort)"
        let connected = ClientBootstrap(group: context.eventLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOWebSocketClientUpgrader(
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(ProxyUpstream(downstream: downstream))
                                ready.succeed(channel)
                            }
                        }
                    )
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(
                        leftOverBytesStrategy: .forwardBytes,
                        withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in })
                    )
                    try channel.pipeline.syncOperations.addHandler(WebSocketUpgradeRequest(uri: "/.ws?v=5&ns=seats", host: host))
                }
            }
            .connect(host: "127.0.0.1", port: upstreamPort)
        connected.whenFailure { ready.fail($0) }
        ready.futureResult.whenFailure { _ in downstream.close(promise: nil) }
        upstream = ready.futureResult
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard frame.opcode == .text else {
            if frame.opcode == .connectionClose { context.close(promise: nil) }
            return
        }
        let text = String(buffer: frame.unmaskedData)
        if text.contains(#""a":"p""#), text.contains(#""h":""#) {
            transactions += 1
            if transactions % dropEvery == 0, let number = try? JSONParser.parse(text)["d"]?["r"]?.numberValue {
                let ok = context.channel.allocator.buffer(string: #"{"t":"d","d":{"r":\#(Int(number)),"b":{"s":"ok","d":{}}}}"#)
                context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: ok)), promise: nil)
                return
            }
        }
        let forwarded = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: frame.unmaskedData)
        upstream?.whenSuccess { $0.writeAndFlush(forwarded, promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        upstream?.whenSuccess { $0.close(promise: nil) }
        context.fireChannelInactive()
    }
}

/// The server's side of one proxied connection: every text frame goes to the client as it came.
private final class ProxyUpstream: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame

    private let downstream: any Channel

    init(downstream: any Channel) {
        self.downstream = downstream
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if frame.opcode == .text {
            downstream.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: frame.unmaskedData), promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        downstream.close(promise: nil)
        context.fireChannelInactive()
    }
}
