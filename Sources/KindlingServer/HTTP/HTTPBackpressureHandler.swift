import NIOCore
import NIOHTTP1

/// Stops reading a plain HTTP connection whose responses are not draining: while the channel
/// is unwritable (more than its write-buffer water mark waits for the socket), the next
/// request is held here and no more bytes are read, so a client that pipelines requests and
/// never reads the answers holds at most one response's worth of memory. Reading resumes once
/// the socket has taken the backlog.
final class HTTPBackpressureHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private var held = CircularBuffer<NIOAny>()
    private var readWanted = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if held.isEmpty, context.channel.isWritable {
            context.fireChannelRead(data)
        } else {
            held.append(data)
        }
    }

    func read(context: ChannelHandlerContext) {
        if held.isEmpty, context.channel.isWritable {
            context.read()
        } else {
            readWanted = true
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { release(context: context) }
        context.fireChannelWritabilityChanged()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // An upgrade removes the HTTP handlers: what was held goes on to the next handler.
        while let data = held.popFirst() { context.fireChannelRead(data) }
        if readWanted {
            readWanted = false
            context.read()
        }
    }

    private func release(context: ChannelHandlerContext) {
        var delivered = false
        while context.channel.isWritable, let data = held.popFirst() {
            context.fireChannelRead(data)
            delivered = true
        }
        if delivered { context.fireChannelReadComplete() }
        if held.isEmpty, context.channel.isWritable, readWanted {
            readWanted = false
            context.read()
        }
    }
}
