/// Standard base64 with padding, for digests.
public enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Appends the base64 text of `bytes` to `output`.
    public static func append(_ bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        let alphabet = self.alphabet
        output.reserveCapacity(output.count + (bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            output.append(alphabet[Int(chunk >> 18)])
            output.append(alphabet[Int((chunk >> 12) & 0x3F)])
            output.append(alphabet[Int((chunk >> 6) & 0x3F)])
            output.append(alphabet[Int(chunk & 0x3F)])
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            let chunk = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            output.append(alphabet[Int((chunk >> 18) & 0x3F)])
            output.append(alphabet[Int((chunk >> 12) & 0x3F)])
            output.append(rest == 2 ? alphabet[Int((chunk >> 6) & 0x3F)] : UInt8(ascii: "="))
            output.append(UInt8(ascii: "="))
        }
    }
}
