/// Word-at-a-time work on a client frame's payload. Client frames arrive masked (RFC 6455 §5.3):
/// the payload XOR a four-byte key repeated. A realtime request is usually a few dozen bytes,
/// read once, so it is unmasked eight bytes at a time into scratch space and read from there,
/// then checked for ASCII the same way.
enum FramePayload {
    /// Writes `masked` XOR the repeated four-byte `key` into `output` (at least as long).
    static func unmask(_ masked: UnsafeRawBufferPointer, key: (UInt8, UInt8, UInt8, UInt8), into output: UnsafeMutableRawBufferPointer) {
        // The key twice over, read as a word the same way as the payload's words, so each byte
        // meets its key byte whatever the machine's byte order.
        let twice = (key.0, key.1, key.2, key.3, key.0, key.1, key.2, key.3)
        withUnsafeBytes(of: twice) { keys in
            let pattern = keys.loadUnaligned(as: UInt64.self)
            var index = 0
            while index + 8 <= masked.count {
                let word = masked.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                output.storeBytes(of: word ^ pattern, toByteOffset: index, as: UInt64.self)
                index += 8
            }
            while index < masked.count {
                output[index] = masked[index] ^ keys[index % 8]
                index += 1
            }
        }
    }

    /// Whether every byte is below 0x80, read eight bytes at a time (a text frame of ASCII is
    /// valid UTF-8 as it stands).
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var high: UInt64 = 0
        var index = 0
        while index + 8 <= bytes.count {
            high |= bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < bytes.count {
            high |= UInt64(bytes[index])
            index += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }
}
