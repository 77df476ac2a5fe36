import KindlingCore
import KindlingProtocol
import Logging
import NIOCore
import NIOWebSocket

/// One realtime client connection, after the WebSocket upgrade: frames in, requests to the
/// namespace; messages from the namespace, frames out.
///
/// It answers pings itself, reassembles split messages, and hands each read batch of requests
/// to the namespace in one block. Bytes the socket has not taken are counted by the channel
/// (its write-buffer water mark is the limit): a reader that falls further behind is
/// disconnected, so memory stays bounded.
final class WebSocketSessionHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let connection = ConnectionID.next()
    private let namespace: Namespace
    private let outbox: EventLoopOutbox
    private let maxPendingBytes: Int
    private let handshake: [UInt8]
    private var logger: Logger
    private var assembler: FrameAssembler
    private var inputs: [SessionInput] = []
    private var context: ChannelHandlerContext?
    /// Where encoded frames enter the pipeline: just past SwiftNIO's frame encoder, since they
    /// already carry their headers (see `TextFrame`).
    private var framedOutput: ChannelHandlerContext?
    private var closing = false
    /// Frames were written since the last flush.
    private var unflushed = false

    init(namespace: Namespace, outbox: EventLoopOutbox, handshakeHost: String, configuration: ServerConfiguration) {
        self.namespace = namespace
        self.outbox = outbox
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
        do {
            framedOutput = try context.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self)
        } catch {
            logger.error("no WebSocket frame encoder in the pipeline; closing: \(error)")
            context.close(promise: nil)
            return
        }
        namespace.attach(connection, outbound: ConnectionOutbound(outbox: outbox, handler: self))
        logger.debug("connected")
        write(TextFrame.frames(handshake))
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
                write(TextFrame.frames(ServerMessage.pong))
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

    /// Writes encoded frames now (the session's own replies).
    func write(_ frames: [ByteBuffer]) {
        _ = enqueue(frames)
        flush()
    }

    /// Writes encoded frames without flushing them; true when the connection had nothing
    /// unflushed, so the caller must flush it later.
    func enqueue(_ frames: [ByteBuffer]) -> Bool {
        guard let framedOutput, !closing, !frames.isEmpty else { return false }
        for frame in frames { framedOutput.write(NIOAny(frame), promise: nil) }
        defer { unflushed = true }
        return !unflushed
    }

    /// Sends what was written since the last flush; disconnects the reader when more than the
    /// limit is still waiting after the socket took what it could.
    func flush() {
        guard unflushed, let context else { return }
        unflushed = false
        framedOutput?.flush()
        if !context.channel.isWritable, !closing {
            // No close frame: it would queue behind the backlog the reader is not taking.
            logger.warning("disconnecting a reader that fell behind: more than \(maxPendingBytes) bytes waiting")
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
