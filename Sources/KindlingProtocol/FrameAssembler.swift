/// Reassembles the client's split messages.
///
/// A client cuts a message longer than 16,384 characters into pieces and first sends a frame
/// holding only the piece count; a frame `0` is a keepalive. Every other frame is a whole message.
public struct FrameAssembler: Sendable {
    private enum State: Sendable {
        case idle
        case collecting(remaining: Int, parts: [String], size: Int)
        /// A message over the limit: its pieces are read and dropped, each only scanned for
        /// the number of the request to refuse.
        case discarding(remaining: Int, scanner: RequestNumberScanner)
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

    /// Whether an oversized message is read to its last piece and refused naming its request
    /// (the server: the client's write fails and the connection goes on), or refused at once
    /// (the client SDK: it closes the connection).
    public let readsOversizedToTheEnd: Bool

    public init(maxMessageBytes: Int = 16 * 1024 * 1024 + 64 * 1024, readsOversizedToTheEnd: Bool = false) {
        self.maxMessageBytes = maxMessageBytes
        self.readsOversizedToTheEnd = readsOversizedToTheEnd
    }

    /// The bytes of the pieces of a split message received so far (what a server holds for
    /// this connection until the message is complete).
    public var bufferedBytes: Int {
        if case .collecting(_, _, let size) = state { return size }
        return 0
    }

    /// What one frame, given as bytes, amounted to.
    public enum BytesResult: Sendable, Equatable {
        /// A keepalive, or a piece of a message still incomplete.
        case nothing
        /// The frame is a whole message by itself: decode it where it lies, with no copy.
        case thisFrame
        /// The last piece of a split message: the pieces joined.
        case message(String)
    }

    /// Takes one text frame.
    public mutating func receive(_ frame: String) throws(ProtocolError) -> Result {
        var text = frame
        let result: Swift.Result<BytesResult, ProtocolError> = text.withUTF8 { bytes in
            Swift.Result { () throws(ProtocolError) in try receive(utf8: UnsafeRawBufferPointer(bytes)) }
        }
        switch try result.get() {
        case .nothing: return .nothing
        case .thisFrame: return .message(frame)
        case .message(let message): return .message(message)
        }
    }

    /// Takes one text frame as its bytes, which must be valid UTF-8 (RFC 6455 requires it of a
    /// text frame; the server checks before this). A whole message is left where it is, so the
    /// common case, a message in one frame, is decoded from the frame's own bytes.
    public mutating func receive(utf8 frame: UnsafeRawBufferPointer) throws(ProtocolError) -> BytesResult {
        switch state {
        case .idle:
            if let count = FrameAssembler.frameCount(frame) {
                if count == 0 { return .nothing }
                // Each piece is at most 16,384 UTF-16 units, at most 3 bytes each in UTF-8: more
                // pieces than that make a message over the limit.
                guard count > maxMessageBytes / 16_384 + 1 else {
                    state = .collecting(remaining: count, parts: [], size: 0)
                    return .nothing
                }
                guard readsOversizedToTheEnd else { throw ProtocolError(.tooLarge, "Frame count \(count) exceeds the message size limit") }
                state = .discarding(remaining: count, scanner: RequestNumberScanner())
                return .nothing
            }
            guard frame.count <= maxMessageBytes else {
                var scanner = RequestNumberScanner()
                scanner.scan(frame)
                throw tooLarge(requestNumber: readsOversizedToTheEnd ? scanner.requestNumber : nil)
            }
            return .thisFrame
        case .collecting(let remaining, var parts, let size):
            let total = size + frame.count
            guard total <= maxMessageBytes else {
                guard readsOversizedToTheEnd else {
                    state = .idle
                    throw ProtocolError(.tooLarge, "Message of over \(maxMessageBytes) bytes exceeds the limit")
                }
                // Read on to its last piece, so the connection stays in step, and refused then.
                var scanner = RequestNumberScanner()
                for part in parts { scanner.scan(part.utf8) }
                return try discard(remaining: remaining, scanner: scanner, frame: frame)
            }
            parts.append(String(decoding: frame, as: UTF8.self))
            if remaining == 1 {
                state = .idle
                return .message(parts.joined())
            }
            state = .collecting(remaining: remaining - 1, parts: parts, size: total)
            return .nothing
        case .discarding(let remaining, let scanner):
            return try discard(remaining: remaining, scanner: scanner, frame: frame)
        }
    }

    /// Drops one piece of an oversized message; after its last, refuses the message, naming
    /// its request when the scanner found it: the client's write then fails with `too_big`
    /// instead of the connection closing (on which an SDK would send the write again, for ever).
    private mutating func discard(remaining: Int, scanner: RequestNumberScanner, frame: UnsafeRawBufferPointer) throws(ProtocolError) -> BytesResult {
        var scanner = scanner
        // Not kept in the state meanwhile, so the scanner is changed in place.
        state = .idle
        scanner.scan(frame)
        guard remaining <= 1 else {
            state = .discarding(remaining: remaining - 1, scanner: scanner)
            return .nothing
        }
        throw tooLarge(requestNumber: scanner.requestNumber)
    }

    private func tooLarge(requestNumber: Int?) -> ProtocolError {
        ProtocolError(.tooLarge, "Message exceeds the limit of \(maxMessageBytes) bytes", requestNumber: requestNumber)
    }

    /// The count when the frame is a count header: 1 to 6 digits only (a keepalive is `0`).
    static func frameCount(_ frame: UnsafeRawBufferPointer) -> Int? {
        guard !frame.isEmpty, frame.count <= 6 else { return nil }
        var count = 0
        for byte in frame {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            count = count * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return count
    }
}
