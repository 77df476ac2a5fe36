import KindlingCore
import KindlingWebSocketClient
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

/// The client's side of one proxied connection.
final class ProxyDownstream: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let upstreamPort: Int
    private let dropEvery: Int
    /// Transaction puts seen by every connection of the proxy: counted across connections, so
    /// updates are lost even when each student sends only a few (a loaded machine in CI).
    private let transactions: TransactionCount
    private var upstream: EventLoopFuture<any Channel>?

    init(upstreamPort: Int, dropEvery: Int, transactions: TransactionCount) {
        self.upstreamPort = upstreamPort
        self.dropEvery = dropEvery
        self.transactions = transactions
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
            let seen = transactions.value.add(1, ordering: .relaxed).newValue
            if seen % dropEvery == 0, let number = try? JSONParser.parse(text)["d"]?["r"]?.numberValue {
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

/// A count shared by every connection of one proxy.
final class TransactionCount: Sendable {
    let value = Atomic<Int>(0)
}
