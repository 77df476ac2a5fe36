import NIOCore

/// The NIO side of a connection: accumulates bytes, parses them into operations and hands each to
/// the client, in order, through an AsyncStream. PING is answered here at once so keep-alive never
/// waits on the client's actor. A parse error is handed on and the channel is closed.
final class NATSChannelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private var parser = NATSParser()
    private var cumulation: ByteBuffer?
    private let events: AsyncStream<Result<NATSServerOp, NATSProtocolError>>.Continuation

    init(events: AsyncStream<Result<NATSServerOp, NATSProtocolError>>.Continuation) {
        self.events = events
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        if cumulation == nil {
            cumulation = incoming
        } else {
            cumulation?.writeBuffer(&incoming)
        }
        guard var buffer = cumulation else { return }
        cumulation = nil
        do {
            while let op = try parser.next(&buffer) {
                switch op {
                case .ping:
                    var pong = context.channel.allocator.buffer(capacity: 6)
                    NATSEncoder.pong(into: &pong)
                    context.writeAndFlush(NIOAny(pong), promise: nil)
                case .info(let info):
                    parser.setMaxPayload(info.maxPayload)
                    events.yield(.success(op))
                default:
                    events.yield(.success(op))
                }
            }
        } catch {
            events.yield(.failure(error))
            context.close(promise: nil)
            return
        }
        if buffer.readableBytes > 0 {
            buffer.discardReadBytes()
            cumulation = buffer
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        events.finish()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
