/// Cuts an outgoing message into the pieces the SDKs reassemble: a message over 16,384 UTF-16
/// units goes as a frame holding the piece count, then the pieces.
///
/// Each piece ends on a character boundary, so every frame is valid UTF-8 on its own (WebSocket
/// text frames must be). A piece of at most 16,384 bytes holds at most 16,384 UTF-16 units. The
/// count stays within 4 digits (iOS reads at most 4) for messages up to about 160 MB.
public enum FrameSplitter {
    public static let pieceLimit = 16_384

    /// The frames to send for `message` (one frame when it is short).
    public static func frames(_ message: [UInt8]) -> [ArraySlice<UInt8>] {
        guard message.count > pieceLimit else { return [message[...]] }
        var pieces: [ArraySlice<UInt8>] = []
        var start = 0
        while start < message.count {
            var end = min(start + pieceLimit, message.count)
            // Back off continuation bytes (10xxxxxx) so no character is cut.
            while end < message.count, message[end] & 0xC0 == 0x80 { end -= 1 }
            pieces.append(message[start..<end])
            start = end
        }
        return [Array(String(pieces.count).utf8)[...]] + pieces
    }
}
