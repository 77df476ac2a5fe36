/// Cuts an outgoing message into the pieces the SDKs reassemble: a message over 16,384 units goes
/// as a frame holding the piece count, then the pieces.
///
/// Clients measure in UTF-16 units, as the official SDKs do (wire protocol §2.2); the server
/// measures in bytes, which needs no scan (a piece of at most 16,384 bytes holds at most 16,384
/// UTF-16 units, so either way every piece is one the SDKs accept). Each piece ends on a character
/// boundary, so every frame is valid UTF-8 on its own (WebSocket text frames must be). The count
/// stays within 4 digits (iOS reads at most 4) for messages up to about 160 MB.
///
/// Bytes that are not UTF-8 (no Swift `String` holds them, so no caller has them today) are cut
/// too, never looping and never past the limit: a piece ends at a byte boundary where no
/// character boundary is near, and a byte that starts no character counts as one unit, as the
/// replacement character a decoder would read it as.
public enum FrameSplitter {
    public static let pieceLimit = 16_384

    /// What `pieceLimit` counts.
    public enum Measure: Sendable {
        /// UTF-8 bytes: the server's choice, cut without reading the message.
        case utf8Bytes
        /// UTF-16 code units (`String.utf16.count`): what the official clients cut by.
        case utf16Units
    }

    /// The frames to send for `message` (one frame when it is short).
    public static func frames(_ message: [UInt8], measuring measure: Measure = .utf8Bytes) -> [ArraySlice<UInt8>] {
        // No message has more UTF-16 units than bytes, so short ones need no scan in either measure.
        guard message.count > pieceLimit else { return [message[...]] }
        let pieces: [ArraySlice<UInt8>]
        switch measure {
        case .utf8Bytes: pieces = byteSizedPieces(message)
        case .utf16Units: pieces = unitSizedPieces(message)
        }
        guard pieces.count > 1 else { return pieces }
        return [Array(String(pieces.count).utf8)[...]] + pieces
    }

    private static func byteSizedPieces(_ message: [UInt8]) -> [ArraySlice<UInt8>] {
        var pieces: [ArraySlice<UInt8>] = []
        var start = 0
        while start < message.count {
            let limit = min(start + pieceLimit, message.count)
            var end = limit
            // Back off continuation bytes (10xxxxxx) so no character is cut: at most three, the
            // most a character has. More is not UTF-8, and the piece ends at the limit.
            while end < message.count, end > limit - 3, message[end] & 0xC0 == 0x80 { end -= 1 }
            if end < message.count, message[end] & 0xC0 == 0x80 { end = limit }
            pieces.append(message[start..<end])
            start = end
        }
        return pieces
    }

    private static func unitSizedPieces(_ message: [UInt8]) -> [ArraySlice<UInt8>] {
        var pieces: [ArraySlice<UInt8>] = []
        var start = 0
        var units = 0
        // Continuation bytes the character being read still has to come.
        var expected = 0
        for (index, byte) in message.enumerated() {
            if byte & 0xC0 == 0x80 && expected > 0 {
                expected -= 1
                continue
            }
            // A lead byte starts a character: four-byte ones are a surrogate pair in UTF-16.
            let size = byte >= 0xF0 ? 2 : 1
            switch byte {
            case 0xC0..<0xE0: expected = 1
            case 0xE0..<0xF0: expected = 2
            case 0xF0...: expected = 3
            default: expected = 0
            }
            if units + size > pieceLimit {
                pieces.append(message[start..<index])
                start = index
                units = 0
            }
            units += size
        }
        pieces.append(message[start...])
        return pieces
    }
}
