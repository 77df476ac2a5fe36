/// Base64 as the Firebase JS SDK encodes a long-polling request's data: the URL-safe alphabet
/// (`-` and `_`) with `.` for padding. The standard alphabet's `+`, `/` and `=` are read too,
/// as the SDK's own decoder does. Written here: Foundation's decoder takes only the standard
/// alphabet, and the server target does not use Foundation.
enum WebSafeBase64 {
    /// The bytes `text` encodes; nil when it holds a character outside both alphabets, padding
    /// anywhere but at the end, or a length no encoder makes.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 4 * 3 + 3)
        var group: UInt32 = 0
        var digits = 0
        var padding = 0
        for character in text {
            if character == UInt8(ascii: ".") || character == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            guard padding == 0, let value = sextet(character) else { return nil }
            group = group << 6 | UInt32(value)
            digits += 1
            if digits == 4 {
                bytes.append(UInt8(truncatingIfNeeded: group >> 16))
                bytes.append(UInt8(truncatingIfNeeded: group >> 8))
                bytes.append(UInt8(truncatingIfNeeded: group))
                group = 0
                digits = 0
            }
        }
        guard padding <= 2 else { return nil }
        switch digits {
        case 0:
            guard padding == 0 else { return nil }
        case 2:
            bytes.append(UInt8(truncatingIfNeeded: group >> 4))
        case 3:
            bytes.append(UInt8(truncatingIfNeeded: group >> 10))
            bytes.append(UInt8(truncatingIfNeeded: group >> 2))
        default:
            return nil
        }
        return bytes
    }

    private static func sextet(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"), UInt8(ascii: "+"): 62
        case UInt8(ascii: "_"), UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
