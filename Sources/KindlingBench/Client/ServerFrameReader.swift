import NIOCore

/// Reads what a server sends over a WebSocket (RFC 6455 §5.2) from the socket's bytes: whole
/// text messages (their fragments joined), pings and the close.
///
/// Written by hand although SwiftNIO has a frame decoder: that one made a `WebSocketFrame` per
/// frame and passed it along a pipeline step, and with the retains and exclusivity checks that
/// come with it, it was about a quarter of this client's CPU in a fan-out (BENCHMARKS.md, round
/// 11). On two shared cores the client's cost is taken from the server it measures, and the
/// Redis client beside it parses RESP in its own handler, so the realtime client does the same.
struct ServerFrameReader {
    /// What the connection acts on; binary messages and pongs are passed over.
    enum Item: Equatable {
        /// A whole text message.
        case text(ByteBuffer)
        /// A ping, with the payload its pong must carry.
        case ping(ByteBuffer)
        /// The server's close frame.
        case close
    }

    static let continuation: UInt8 = 0x0, text: UInt8 = 0x1, binary: UInt8 = 0x2
    static let close: UInt8 = 0x8, ping: UInt8 = 0x9, pong: UInt8 = 0xA

    /// The largest frame, and the largest message its fragments may join into.
    let maxMessageBytes: Int
    /// Bytes read and not yet taken as frames.
    private var unread = ByteBuffer()
    /// The message whose fragments are arriving: text ones joined here, binary ones skipped.
    private var fragments = Fragments.none

    private enum Fragments {
        case none
        case text(ByteBuffer)
        case binary
    }

    init(maxMessageBytes: Int) {
        self.maxMessageBytes = maxMessageBytes
    }

    /// Adds the bytes of one read.
    mutating func append(_ bytes: ByteBuffer) {
        if unread.readableBytes == 0 {
            unread = bytes
        } else {
            var bytes = bytes
            unread.writeBuffer(&bytes)
        }
    }

    /// The next item, or nil until more bytes arrive. Throws on what a server must not send:
    /// a masked frame, RSV bits (no extension is negotiated), a reserved opcode, a fragmented or
    /// long control frame, a data frame inside a fragmented message or a continuation outside
    /// one, a frame or a joined message over the limit.
    mutating func next() throws(BenchError) -> Item? {
        while let (fin, opcode, payload) = try frame() {
            switch opcode {
            case Self.ping: return .ping(payload)
            case Self.close: return .close
            case Self.pong: continue
            case Self.text, Self.binary:
                guard case .none = fragments else { throw .unexpectedReply("a WebSocket data frame inside a fragmented message") }
                if fin {
                    if opcode == Self.text { return .text(payload) }
                } else {
                    fragments = opcode == Self.text ? .text(payload) : .binary
                }
            default:
                if let joined = try join(payload, fin: fin) { return .text(joined) }
            }
        }
        return nil
    }

    /// Adds a continuation to the message under way; the whole text message once `fin`.
    private mutating func join(_ piece: ByteBuffer, fin: Bool) throws(BenchError) -> ByteBuffer? {
        switch fragments {
        case .none:
            throw .unexpectedReply("a WebSocket continuation frame outside a fragmented message")
        case .binary:
            if fin { fragments = .none }
            return nil
        case .text(var collected):
            // Let go of the held copy first, so the bytes are added in place.
            fragments = .none
            guard piece.readableBytes <= maxMessageBytes - collected.readableBytes else {
                throw .unexpectedReply("a WebSocket message larger than \(maxMessageBytes) bytes")
            }
            var piece = piece
            collected.writeBuffer(&piece)
            if fin { return collected }
            fragments = .text(collected)
            return nil
        }
    }

    /// The next whole frame's final bit, opcode and payload (a slice of the bytes read).
    private mutating func frame() throws(BenchError) -> (fin: Bool, opcode: UInt8, payload: ByteBuffer)? {
        let start = unread.readerIndex
        guard let first = unread.getInteger(at: start, as: UInt8.self), let second = unread.getInteger(at: start + 1, as: UInt8.self)
        else { return keepRest() }
        let fin = first & 0x80 != 0
        let opcode = first & 0x0F
        guard first & 0x70 == 0 else { throw .unexpectedReply("a WebSocket frame with RSV bits set") }
        switch opcode {
        case Self.continuation, Self.text, Self.binary, Self.close, Self.ping, Self.pong: break
        default: throw .unexpectedReply("a WebSocket frame with reserved opcode \(opcode)")
        }
        guard second & 0x80 == 0 else { throw .unexpectedReply("a masked WebSocket frame from the server") }
        var length = UInt64(second & 0x7F)
        var header = 2
        if length == 126 {
            guard let extended = unread.getInteger(at: start + 2, as: UInt16.self) else { return keepRest() }
            length = UInt64(extended)
            header = 4
        } else if length == 127 {
            guard let extended = unread.getInteger(at: start + 2, as: UInt64.self) else { return keepRest() }
            length = extended
            header = 10
        }
        if opcode & 0x8 != 0, !fin || length > 125 {
            throw .unexpectedReply("a WebSocket control frame fragmented or longer than 125 bytes")
        }
        guard length <= UInt64(max(maxMessageBytes, 0)) else {
            throw .unexpectedReply("a WebSocket frame larger than \(maxMessageBytes) bytes")
        }
        // At most the limit, an Int; `getSlice` is nil while the payload is not all there.
        guard let payload = unread.getSlice(at: start + header, length: Int(length)) else { return keepRest() }
        unread.moveReaderIndex(forwardBy: header + Int(length))
        return (fin, opcode, payload)
    }

    /// Keeps the bytes of a frame not yet whole in a buffer of their own, so they do not hold
    /// the whole read they came in; nothing is kept when every byte was taken.
    private mutating func keepRest() -> (fin: Bool, opcode: UInt8, payload: ByteBuffer)? {
        guard unread.readableBytes > 0 else {
            unread = ByteBuffer()
            return nil
        }
        if unread.readerIndex > 0 {
            var own = ByteBufferAllocator().buffer(capacity: max(unread.readableBytes, 256))
            own.writeImmutableBuffer(unread)
            unread = own
        }
        return nil
    }
}
