import NIOCore
import NIOWebSocket

/// The server's side of one proxied connection: every text frame goes to the client as it came.
final class ProxyUpstream: ChannelInboundHandler {
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
