import NIOCore
import NIOWebSocket

/// Client frames arrive masked (RFC 6455 §5.3). SwiftNIO's `unmaskedData` copies the payload
/// into a new buffer and unmasks it a byte at a time; a realtime request is usually a few dozen
/// bytes, read once, so a small payload is unmasked eight bytes at a time into scratch space on
/// the stack instead, and read from there.
enum FrameUnmasking {
    /// The largest payload unmasked on the stack; larger ones (rare, and worth a heap buffer)
    /// go through `unmaskedData`.
    static let stackLimit = 1024

    /// Calls `body` with the frame's payload, unmasked.
    static func withUnmaskedPayload<Result>(_ frame: WebSocketFrame, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        guard let key = frame.maskKey, frame.data.readableBytes <= stackLimit else {
            return frame.unmaskedData.withUnsafeReadableBytes(body)
        }
        return frame.data.withUnsafeReadableBytes { masked in
            withUnsafeTemporaryAllocation(byteCount: masked.count, alignment: 8) { scratch in
                unmask(masked, key: key, into: scratch)
                return body(UnsafeRawBufferPointer(scratch))
            }
        }
    }

    /// Writes `masked` XOR the repeated four-byte `key` into `output` (at least as long).
    static func unmask(_ masked: UnsafeRawBufferPointer, key: WebSocketMaskingKey, into output: UnsafeMutableRawBufferPointer) {
        // The key twice over, read as a word the same way as the payload's words, so each byte
        // meets its key byte whatever the machine's byte order.
        let twice = (key[0], key[1], key[2], key[3], key[0], key[1], key[2], key[3])
        let pattern = withUnsafeBytes(of: twice) { $0.loadUnaligned(as: UInt64.self) }
        var index = 0
        while index + 8 <= masked.count {
            let word = masked.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            output.storeBytes(of: word ^ pattern, toByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < masked.count {
            output[index] = masked[index] ^ key[index % 4]
            index += 1
        }
    }
}
