import Logging
import NIOCore
import NIOWebSocket

/// Refuses WebSocket frames RFC 6455 forbids from a client, before the session sees them:
/// an unmasked frame (§5.1), RSV bits without a negotiated extension (§5.2) and reserved
/// opcodes. SwiftNIO's decoder accepts all three. The connection is closed with 1002.
final class WebSocketFrameValidator: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let logger: Logger
    private var refused = false

    init(logger: Logger) { self.logger = logger }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        let frame = unwrapInboundIn(data)
        guard let problem = WebSocketFrameValidator.problem(with: frame) else {
            context.fireChannelRead(data)
            return
        }
        refused = true
        logger.notice("closing a realtime connection: \(problem)")
        var payload = context.channel.allocator.buffer(capacity: 2 + problem.utf8.count)
        payload.write(webSocketErrorCode: .protocolError)
        payload.writeString(problem)
        let close = WebSocketFrame(fin: true, opcode: .connectionClose, data: payload)
        context.writeAndFlush(wrapOutboundOut(close)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    /// Why a client may not send `frame`, or nil when it may.
    static func problem(with frame: WebSocketFrame) -> String? {
        if frame.maskKey == nil { return "unmasked client frame" }
        if frame.rsv1 || frame.rsv2 || frame.rsv3 { return "RSV bits set without an extension" }
        switch frame.opcode {
        case .continuation, .text, .binary, .connectionClose, .ping, .pong: return nil
        default: return "reserved opcode"
        }
    }
}
