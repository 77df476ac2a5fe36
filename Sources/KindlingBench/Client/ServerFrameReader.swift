import NIOCore

/// Finds the WebSocket frames a server sends (RFC 6455 §5.2) in the socket's bytes.
///
/// Written by hand although SwiftNIO has a frame decoder: that one made a `WebSocketFrame` per
/// frame and passed it along a pipeline step, and with the retains and exclusivity checks that
/// go with it, it was a quarter of this client's CPU in a fan-out (BENCHMARKS.md, round 11).
/// On two shared cores the client's cost is taken from the server it measures, and the Redis
/// client beside it parses RESP in its own handler, so the realtime client does the same.
struct ServerFrameReader {
    /// One frame: its final bit, opcode and payload (a slice of the bytes read).
    struct Frame {
        let fin: Bool
        let opcode: UInt8
        let payload: ByteBuffer
    }

    static let continuation: UInt8 = 0x0, text: UInt8 = 0x1, binary: UInt8 = 0x2
    static let close: UInt8 = 0x8, ping: UInt8 = 0x9, pong: UInt8 = 0xA

    /// The largest payload a frame may have.
    let maxFrameBytes: Int
    /// Bytes read and not yet handed out as frames.
    private var unread = ByteBuffer()

    init(maxFrameBytes: Int) {
        self.maxFrameBytes = maxFrameBytes
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

    /// The next whole frame, or nil until more bytes arrive. Throws on what a server must not
    /// send: a masked frame, RSV bits (no extension is negotiated), a reserved opcode, a
    /// fragmented or long control frame, a frame over the limit.
    mutating func next() throws(BenchError) -> Frame? {
        guard let first = unread.getInteger(at: unread.readerIndex, as: UInt8.self),
            let second = unread.getInteger(at: unread.readerIndex + 1, as: UInt8.self)
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
            guard let extended = unread.getInteger(at: unread.readerIndex + 2, as: UInt16.self) else { return keepRest() }
            length = UInt64(extended)
            header = 4
        } else if length == 127 {
            guard let extended = unread.getInteger(at: unread.readerIndex + 2, as: UInt64.self) else { return keepRest() }
            length = extended
            header = 10
        }
        if opcode & 0x8 != 0, !fin || length > 125 {
            throw .unexpectedReply("a WebSocket control frame fragmented or longer than 125 bytes")
        }
        guard length <= UInt64(max(maxFrameBytes, 0)) else {
            throw .unexpectedReply("a WebSocket frame larger than \(maxFrameBytes) bytes")
        }
        // At most the limit, an Int, and compared with what is there before it is added to.
        guard unread.readableBytes - header >= Int(length) else { return keepRest() }
        unread.moveReaderIndex(forwardBy: header)
        guard let payload = unread.readSlice(length: Int(length)) else { return keepRest() }
        return Frame(fin: fin, opcode: opcode, payload: payload)
    }

    /// Keeps the bytes of a frame not yet whole in a buffer of their own, so they do not hold
    /// the whole read they came in; nothing is kept when every byte was handed out.
    private mutating func keepRest() -> Frame? {
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
