import KindlingCore
import NIOCore
import NIOHTTP1

/// The whole pipeline of a connection over `--max-connections` (after the HTTP codec): its first
/// request, a REST one or a WebSocket upgrade alike, gets 503 with `Retry-After`, except a
/// liveness probe (`GET /.health`), which gets 200: the process serves, and a probe that failed
/// during a flood of connections would have a healthy server restarted. Then the output side
/// closes, and what the client still sends (a write's body) is read and dropped until it closes,
/// so the answer is not lost to a reset. The connection is closed after `wait` in any case.
final class OverLimitResponder: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart

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
        guard case .head(let head) = unwrapInboundIn(data), !answered else { return }
        answered = true
        let isLivenessProbe = head.method == .GET && RequestTarget(uri: head.uri).path == "/.health"
        if isLivenessProbe {
            HTTPErrorReply.send(.ok, body: Array(#"{"status":"ok"}"#.utf8), closing: .output, context: context)
        } else {
            let message = "The server is at its limit of \(limit) connections; try again shortly."
            HTTPErrorReply.send(
                .serviceUnavailable, body: RESTRendering.error(message, print: .compact), headers: [("Retry-After", "1")], closing: .output,
                context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
