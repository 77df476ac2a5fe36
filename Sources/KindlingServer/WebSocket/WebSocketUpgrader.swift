import NIOCore
import NIOHTTP1
import NIOWebSocket

/// The WebSocket upgrade: SwiftNIO's upgrader checks the handshake and answers it; the pipeline
/// after it is built here, with SwiftNIO's frame encoder but not its decoder, since the session
/// reads frames from the socket's bytes itself (`ClientFrameReader`). Taking the decoder out
/// after SwiftNIO added it would not do: it leaves the pipeline a loop turn later, and frames it
/// decoded meanwhile would reach a session that reads bytes.
struct WebSocketUpgrader: HTTPServerProtocolUpgrader, Sendable {
    private let handshake: NIOWebSocketServerUpgrader
    private let pipeline: @Sendable (any Channel, HTTPRequestHead) throws -> Void

    /// `shouldUpgrade` gives the extra response headers, or nil to refuse the upgrade;
    /// `pipeline` adds the session's handlers after the frame encoder (on the channel's loop).
    init(
        shouldUpgrade: @escaping @Sendable (any Channel, HTTPRequestHead) -> EventLoopFuture<HTTPHeaders?>,
        pipeline: @escaping @Sendable (any Channel, HTTPRequestHead) throws -> Void
    ) {
        // SwiftNIO's frame size limit and pipeline handler belong to the pipeline it would
        // build, which `upgrade` below builds instead: neither is used.
        self.handshake = NIOWebSocketServerUpgrader(
            maxFrameSize: Int(Int32.max),
            automaticErrorHandling: false,
            shouldUpgrade: shouldUpgrade,
            upgradePipelineHandler: { channel, _ in channel.eventLoop.makeSucceededVoidFuture() }
        )
        self.pipeline = pipeline
    }

    var supportedProtocol: String { handshake.supportedProtocol }

    var requiredUpgradeHeaders: [String] { handshake.requiredUpgradeHeaders }

    func buildUpgradeResponse(channel: any Channel, upgradeRequest: HTTPRequestHead, initialResponseHeaders: HTTPHeaders) -> EventLoopFuture<HTTPHeaders> {
        handshake.buildUpgradeResponse(channel: channel, upgradeRequest: upgradeRequest, initialResponseHeaders: initialResponseHeaders)
    }

    func upgrade(context: ChannelHandlerContext, upgradeRequest: HTTPRequestHead) -> EventLoopFuture<Void> {
        let channel = context.channel
        return context.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(WebSocketFrameEncoder())
            try pipeline(channel, upgradeRequest)
        }
    }
}
