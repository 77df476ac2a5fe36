import NIOCore
import NIOWebSocket

/// Reads the WebSocket frames a client sends (RFC 6455 §5.2) straight from the socket's bytes,
/// and hands each to the session with its payload unmasked, as raw bytes.
///
/// Written by hand although SwiftNIO has a frame decoder: that one makes a `WebSocketFrame` (two
/// buffer slices) per frame and passes it along a pipeline step, which cost about 300 ns a frame
/// with pipelining clients (BENCHMARKS.md, issue 16), more than parsing the request inside it.
/// It also refuses, as soon as a frame's header is in, what RFC 6455 forbids from a client and
/// SwiftNIO's decoder let through: an unmasked frame, RSV bits without an extension, a reserved
/// opcode; and what that decoder refused: a fragmented or long control frame, and a frame longer
/// than the limit (refused before its payload is buffered).
struct ClientFrameReader {
    enum Opcode: UInt8 {
        case continuation = 0x0, text = 0x1, binary = 0x2, close = 0x8, ping = 0x9, pong = 0xA

        var isControl: Bool { rawValue & 0x8 != 0 }
    }

    /// Why a frame is refused; the connection closes with `closeCode` and `reason`.
    enum Refusal: Error, Equatable {
        case unmasked
        case reservedBits
        case reservedOpcode(UInt8)
        case longOrFragmentedControlFrame
        case tooLarge(limit: Int)

        var closeCode: WebSocketErrorCode {
            if case .tooLarge = self { return .messageTooLarge }
            return .protocolError
        }

        var reason: String {
            switch self {
            case .unmasked: "unmasked client frame"
            case .reservedBits: "RSV bits set without an extension"
            case .reservedOpcode(let opcode): "reserved opcode \(opcode)"
            case .longOrFragmentedControlFrame: "control frame fragmented or longer than 125 bytes"
            case .tooLarge(let limit): "frame larger than \(limit) bytes"
            }
        }
    }

    /// The largest payload a frame may have.
    let maxFrameBytes: Int
    /// The bytes of a frame not yet whole, from earlier reads (a buffer of the reader's own).
    private var pending: ByteBuffer?

    init(maxFrameBytes: Int) {
        self.maxFrameBytes = maxFrameBytes
    }

    /// The bytes held for a frame not yet whole.
    var pendingBytes: Int { pending?.readableBytes ?? 0 }

    /// Reads every whole frame of the held bytes followed by `bytes`, in order, calling `frame`
    /// with each one's final bit, opcode and unmasked payload (valid during the call only) until
    /// it returns false, which drops the rest. Keeps the bytes of a last frame not yet whole.
    mutating func read(
        _ bytes: ByteBuffer, _ frame: (_ fin: Bool, _ opcode: Opcode, _ payload: UnsafeRawBufferPointer) -> Bool
    ) throws(Refusal) {
        var buffer: ByteBuffer
        let ownBuffer: Bool
        if var held = pending {
            pending = nil
            held.writeImmutableBuffer(bytes)
            buffer = held
            ownBuffer = true
        } else {
            buffer = bytes
            ownBuffer = false
        }
        let read = buffer.withUnsafeReadableBytes { raw in Result { () throws(Refusal) in try frames(in: raw, frame) } }
        let (consumed, stopped) = try read.get()
        guard !stopped else { return }
        buffer.moveReaderIndex(forwardBy: consumed)
        guard buffer.readableBytes > 0 else { return }
        if ownBuffer, consumed == 0 {
            pending = buffer
        } else {
            // Copied, so a few bytes left over do not hold the whole read buffer they came in.
            var own = ByteBufferAllocator().buffer(capacity: max(buffer.readableBytes, 256))
            own.writeImmutableBuffer(buffer)
            pending = own
        }
    }

    /// Hands over the whole frames at the start of `raw`; returns the bytes they took, and
    /// whether `frame` asked to stop.
    private func frames(
        in raw: UnsafeRawBufferPointer, _ frame: (Bool, Opcode, UnsafeRawBufferPointer) -> Bool
    ) throws(Refusal) -> (consumed: Int, stopped: Bool) {
        var offset = 0
        while raw.count - offset >= 2 {
            let available = raw.count - offset
            let first = raw[offset], second = raw[offset + 1]
            guard first & 0x70 == 0 else { throw .reservedBits }
            guard let opcode = Opcode(rawValue: first & 0x0F) else { throw .reservedOpcode(first & 0x0F) }
            let fin = first & 0x80 != 0
            guard second & 0x80 != 0 else { throw .unmasked }
            var length = UInt64(second & 0x7F)
            var header = 2
            if length == 126 {
                guard available >= 4 else { break }
                length = UInt64(raw[offset + 2]) << 8 | UInt64(raw[offset + 3])
                header = 4
            } else if length == 127 {
                guard available >= 10 else { break }
                length = 0
                for index in 2..<10 { length = length << 8 | UInt64(raw[offset + index]) }
                header = 10
            }
            if opcode.isControl, !fin || length > 125 { throw .longOrFragmentedControlFrame }
            guard length <= UInt64(max(maxFrameBytes, 0)) else { throw .tooLarge(limit: maxFrameBytes) }
            // The length is at most the limit, an Int; compared with what is left before it is
            // added to anything.
            let start = offset + header + 4
            guard start <= raw.count, Int(length) <= raw.count - start else { break }
            let end = start + Int(length)
            let key = (raw[start - 4], raw[start - 3], raw[start - 2], raw[start - 1])
            let masked = UnsafeRawBufferPointer(rebasing: raw[start..<end])
            let more = withUnsafeTemporaryAllocation(byteCount: max(masked.count, 1), alignment: 8) { scratch in
                FramePayload.unmask(masked, key: key, into: scratch)
                return frame(fin, opcode, UnsafeRawBufferPointer(rebasing: scratch[0..<masked.count]))
            }
            offset = end
            if !more { return (offset, true) }
        }
        return (offset, false)
    }
}
