import Logging
import NIOCore

/// The first handler of a TLS connection: it looks at the first byte the client sends, and a
/// client speaking plain HTTP to the TLS port (`http://` where `https://` was meant) gets a short
/// `400` in plain text saying so, instead of a TLS alert it cannot read or a silent hang.
///
/// Every TLS connection opens with a handshake record, whose first byte is 0x16; anything else
/// cannot be TLS. A TLS connection is handed on untouched and the handler leaves the pipeline.
/// The refusal is sent, the sending side shut, and what the client still sends discarded until it
/// closes (or for a second at most), so the answer is not lost to a reset by unread bytes.
final class PlainTextRefusalHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The content type of a TLS handshake record (RFC 8446 §5.1).
    static let handshakeRecord: UInt8 = 0x16

    private let logger: Logger
    private var refused = false

    init(logger: Logger) { self.logger = logger }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        let buffer = unwrapInboundIn(data)
        guard let first = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else { return }
        if first == Self.handshakeRecord {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        refused = true
        logger.debug("plain-text request on the TLS port refused", metadata: ["peer": "\(context.remoteAddress.map { "\($0)" } ?? "?")"])
        context.writeAndFlush(NIOAny(Self.refusal(allocator: context.channel.allocator)), promise: nil)
        context.close(mode: .output, promise: nil)
        let channel = context.channel
        context.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
    }

    /// `400` with the server's usual error JSON, as raw bytes: nothing in front of this handler
    /// encodes HTTP.
    static func refusal(allocator: ByteBufferAllocator) -> ByteBuffer {
        let body = RESTRendering.error("This port speaks TLS: use https:// (or wss://)", print: .compact)
        var buffer = allocator.buffer(capacity: 160 + body.count)
        buffer.writeString(
            "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        )
        buffer.writeBytes(body)
        return buffer
    }
}
