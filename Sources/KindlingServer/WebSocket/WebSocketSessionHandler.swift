import KindlingCore
import KindlingProtocol
import Logging
import NIOCore
import NIOWebSocket

/// One realtime client connection, after the WebSocket upgrade: frames in, requests to the
/// namespace; messages from the namespace, frames out.
///
/// It answers pings itself, reassembles split messages, and hands each read batch of requests
/// to the namespace in one block. Outbound bytes are counted until the socket takes them; a
/// reader that falls further behind than the limit is disconnected, so memory stays bounded.
final class WebSocketSessionHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let connection = ConnectionID.next()
    private let namespace: Namespace
    private let handshake: [UInt8]
    private let maxPendingBytes: Int
    private var logger: Logger
    private var assembler: FrameAssembler
    private var inputs: [SessionInput] = []
    private var pendingBytes = 0
    private var context: ChannelHandlerContext?
    private var closing = false

    init(namespace: Namespace, handshakeHost: String, configuration: ServerConfiguration) {
        self.namespace = namespace
        self.maxPendingBytes = configuration.maxPendingOutboundBytes
        self.assembler = FrameAssembler(maxMessageBytes: configuration.maxMessageBytes)
        var logger = configuration.logger
        logger[metadataKey: "connection"] = "\(connection)"
        logger[metadataKey: "namespace"] = "\(namespace.name)"
        self.logger = logger
        self.handshake = ServerMessage.handshake(
            timestamp: Namespace.now(),
            host: handshakeHost,
            session: "\(connection.value)-\(UInt64.random(in: 0...UInt64.max))"
        )
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        namespace.attach(connection, outbound: ConnectionOutbound(eventLoop: context.eventLoop, handler: self))
        logger.debug("connected")
        write([ByteBuffer(bytes: handshake)])
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            receive(String(buffer: frame.unmaskedData), context: context)
        case .ping:
            var payload = frame.unmaskedData
            let pong = WebSocketFrame(fin: true, opcode: .pong, data: payload.readSlice(length: payload.readableBytes) ?? ByteBuffer())
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            close(context: context, code: .normalClosure, reason: "client closed")
        case .binary:
            logger.debug("ignored a binary frame")
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard !inputs.isEmpty else { return }
        namespace.submit(connection, inputs)
        inputs = []
    }

    func channelInactive(context: ChannelHandlerContext) {
        logger.debug("disconnected")
        namespace.detach(connection)
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            logger.info("closing a connection silent for too long")
            closing = true
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.info("connection error: \(error)")
        // SwiftNIO's WebSocket layer has already sent a close frame for protocol errors.
        closing = true
        context.close(promise: nil)
    }

    private func receive(_ text: String, context: ChannelHandlerContext) {
        do throws(ProtocolError) {
            guard case .message(let message) = try assembler.receive(text) else { return }
            switch try ClientMessage.decode(message) {
            case .ping:
                write([ByteBuffer(bytes: ServerMessage.pong)])
            case .otherControl:
                break
            case .request(let request):
                inputs.append(.request(request))
            }
        } catch {
            if let number = error.requestNumber {
                let status = error.validation.map(WireStatus.init) ?? (error.kind == .tooLarge ? .tooBig : .invalidData)
                inputs.append(.reject(number: number, status: status, message: error.message))
                return
            }
            logger.notice("closing: \(error.message)")
            close(context: context, code: error.kind == .tooLarge ? .messageTooLarge : .unacceptableData, reason: error.message)
        }
    }

    /// Writes frames (on the event loop), closing the connection when its backlog is too large.
    func write(_ frames: [ByteBuffer]) {
        guard let context, !closing, !frames.isEmpty else { return }
        // Writes complete in order, so one promise on the last frame accounts for the batch.
        let size = frames.reduce(0) { $0 + $1.readableBytes }
        pendingBytes += size
        for frame in frames.dropLast() {
            context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: frame)), promise: nil)
        }
        let promise = context.eventLoop.makePromise(of: Void.self)
        promise.futureResult.assumeIsolated().whenComplete { _ in self.pendingBytes -= size }
        context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: frames[frames.count - 1])), promise: promise)
        context.flush()
        logger.trace("wrote \(size) bytes; \(pendingBytes) waiting")
        if pendingBytes > maxPendingBytes {
            // No close frame: it would queue behind the backlog the reader is not taking.
            logger.warning("disconnecting a reader that fell behind: \(pendingBytes) bytes waiting (limit \(maxPendingBytes))")
            closing = true
            context.close(promise: nil)
        }
    }

    private func close(context: ChannelHandlerContext, code: WebSocketErrorCode, reason: String) {
        guard !closing else { return }
        closing = true
        var data = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(String(reason.prefix(120)))
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
        context.writeAndFlush(wrapOutboundOut(frame)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}
