import NIOCore
import NIOHTTP1

/// The whole pipeline of a connection over `--max-connections` (after the HTTP codec): its first
/// request, a REST one or a WebSocket upgrade alike, gets 503 with `Retry-After`, and the
/// connection closes. One that sends nothing is closed after `wait`.
final class OverLimitResponder: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let limit: Int
    private let wait: TimeAmount
    private var answered = false

    init(limit: Int, wait: TimeAmount = .seconds(5)) {
        self.limit = limit
        self.wait = wait
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        context.eventLoop.scheduleTask(in: wait) { channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head = unwrapInboundIn(data), !answered else { return }
        answered = true
        HTTPErrorReply.sendAndClose(
            .serviceUnavailable, "The server is at its limit of \(limit) connections; try again shortly.", headers: [("Retry-After", "1")],
            context: context)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
