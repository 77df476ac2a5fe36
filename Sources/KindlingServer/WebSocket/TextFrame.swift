import KindlingProtocol
import NIOCore

/// Server-to-client WebSocket text frames, encoded once per message so every recipient shares
/// the same bytes (server frames are not masked, so they are the same for every connection).
enum TextFrame {
    /// A frame's first byte: FIN set, opcode text.
    static let finalText: UInt8 = 0x81

    /// A final, unmasked text frame holding `payload` (RFC 6455 §5.2): header and payload in one
    /// buffer, so a delivery is one write of one shared buffer.
    static func encoded(_ payload: ArraySlice<UInt8>) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: payload.count + 10)
        write(payload, into: &buffer)
        return buffer
    }

    /// Appends the frame holding `payload` to `buffer`.
    static func write(_ payload: ArraySlice<UInt8>, into buffer: inout ByteBuffer) {
        buffer.writeInteger(finalText)
        switch payload.count {
        case ..<126:
            buffer.writeInteger(UInt8(payload.count))
        case ..<65_536:
            buffer.writeInteger(UInt8(126))
            buffer.writeInteger(UInt16(payload.count))
        default:
            buffer.writeInteger(UInt8(127))
            buffer.writeInteger(UInt64(payload.count))
        }
        buffer.writeBytes(payload)
    }

    /// The frames for one message, split as the SDKs reassemble them.
    static func frames(_ message: [UInt8]) -> [ByteBuffer] {
        // Most messages are one frame: no list of pieces made for them.
        guard !isOneFrame(message) else { return [encoded(message[...])] }
        return FrameSplitter.frames(message).map(encoded)
    }

    /// Whether `message` goes out as one frame (the SDKs split longer ones into pieces).
    static func isOneFrame(_ message: [UInt8]) -> Bool {
        message.count <= FrameSplitter.pieceLimit
    }
}
