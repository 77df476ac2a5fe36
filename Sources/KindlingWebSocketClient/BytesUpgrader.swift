import NIOCore
import NIOHTTP1
import NIOWebSocket

/// SwiftNIO's WebSocket client handshake (the key it sends, the accept it checks) with a pipeline
/// after it that has SwiftNIO's frame encoder but not its decoder: the caller's handlers read
/// the socket's bytes and find the frames themselves.
///
/// Taking SwiftNIO's decoder out after its upgrader added it would not do: a handler leaves the
/// pipeline a loop turn later, and the frames it decoded meanwhile would reach a handler that
/// reads bytes (the server's `WebSocketUpgrader` is built the same way, for the same reason).
struct BytesUpgrader: NIOHTTPClientProtocolUpgrader, Sendable {
    private let handshake: NIOWebSocketClientUpgrader
    private let upgraded: @Sendable (any Channel) throws -> Void

    /// `upgraded` adds the handlers that read the bytes, after the frame encoder (on the loop).
    init(upgraded: @escaping @Sendable (any Channel) throws -> Void) {
        // The frame size limit and pipeline handler belong to the pipeline SwiftNIO would build,
        // which `upgrade` below builds instead: neither is used.
        self.handshake = NIOWebSocketClientUpgrader(
            maxFrameSize: 1 << 16,
            automaticErrorHandling: false,
            upgradePipelineHandler: { channel, _ in channel.eventLoop.makeSucceededVoidFuture() }
        )
        self.upgraded = upgraded
    }

    var supportedProtocol: String { handshake.supportedProtocol }

    var requiredUpgradeHeaders: [String] { handshake.requiredUpgradeHeaders }

    func addCustom(upgradeRequestHeaders: inout HTTPHeaders) {
        handshake.addCustom(upgradeRequestHeaders: &upgradeRequestHeaders)
    }

    func shouldAllowUpgrade(upgradeResponse: HTTPResponseHead) -> Bool {
        handshake.shouldAllowUpgrade(upgradeResponse: upgradeResponse)
    }

    func upgrade(context: ChannelHandlerContext, upgradeResponse: HTTPResponseHead) -> EventLoopFuture<Void> {
        let channel = context.channel
        return context.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(WebSocketFrameEncoder())
            try upgraded(channel)
        }
    }
}
