/// Reassembles the client's split messages.
///
/// A client cuts a message longer than 16,384 characters into pieces and first sends a frame
/// holding only the piece count; a frame `0` is a keepalive. Every other frame is a whole message.
public struct FrameAssembler: Sendable {
    private enum State: Sendable {
        case idle
        case collecting(remaining: Int, parts: [String], size: Int)
    }

    /// What one frame amounted to.
    public enum Result: Sendable, Equatable {
        /// A keepalive, or a piece of a message still incomplete.
        case nothing
        /// A whole message.
        case message(String)
    }

    /// The largest message accepted, in UTF-8 bytes (the SDKs' 16 MB write limit plus room for
    /// the envelope).
    public let maxMessageBytes: Int
    private var state = State.idle

    public init(maxMessageBytes: Int = 16 * 1024 * 1024 + 64 * 1024) {
        self.maxMessageBytes = maxMessageBytes
    }

    /// The bytes of the pieces of a split message received so far (what a server holds for
    /// this connection until the message is complete).
    public var bufferedBytes: Int {
        if case .collecting(_, _, let size) = state { return size }
        return 0
    }

    /// Takes one text frame.
    public mutating func receive(_ frame: String) throws(ProtocolError) -> Result {
        switch state {
        case .idle:
            if let count = FrameAssembler.frameCount(frame) {
                if count == 0 { return .nothing }
                // Each piece is at most 16,384 UTF-16 units, at most 3 bytes each in UTF-8.
                guard count <= maxMessageBytes / 16_384 + 1 else {
                    throw ProtocolError(.tooLarge, "Frame count \(count) exceeds the message size limit")
                }
                state = .collecting(remaining: count, parts: [], size: 0)
                return .nothing
            }
            guard frame.utf8.count <= maxMessageBytes else {
                throw ProtocolError(.tooLarge, "Message of \(frame.utf8.count) bytes exceeds the limit of \(maxMessageBytes)")
            }
            return .message(frame)
        case .collecting(let remaining, var parts, let size):
            let total = size + frame.utf8.count
            guard total <= maxMessageBytes else {
                state = .idle
                throw ProtocolError(.tooLarge, "Message of over \(maxMessageBytes) bytes exceeds the limit")
            }
            parts.append(frame)
            if remaining == 1 {
                state = .idle
                return .message(parts.joined())
            }
            state = .collecting(remaining: remaining - 1, parts: parts, size: total)
            return .nothing
        }
    }

    /// The count when the frame is a count header: 1 to 6 digits only (a keepalive is `0`).
    static func frameCount(_ frame: String) -> Int? {
        let utf8 = frame.utf8
        guard !utf8.isEmpty, utf8.count <= 6, utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int(frame)
    }
}
