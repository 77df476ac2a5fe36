/// A long-polling client's messages, rebuilt from the segments its requests carry in their URLs.
///
/// The JS SDK encodes each message as web-safe base64 and cuts it into segments of at most
/// 1,840 characters, numbered across the connection from 0 (`seg<i>`), each naming how many
/// segments its message has (`ts<i>`). Several requests may be in flight at once, so segments
/// arrive in any order; a message is whole once every segment from its first has come.
/// Bounded: segments more than `window` ahead of the next one expected are refused, and so is
/// holding more than `maxHeldBytes` of text that cannot be used yet.
struct LongPollSegments {
    /// Why a request's segments cannot be taken: the connection ends (its client is not the SDK).
    enum Refusal: Error, Equatable {
        case outOfRange(String)
        case tooLarge(Int)
        case malformed(String)

        var message: String {
            switch self {
            case .outOfRange(let what): "long-polling segment out of range: \(what)"
            case .tooLarge(let limit): "long-polling segments over \(limit) bytes are waiting to be reassembled"
            case .malformed(let what): "malformed long-polling data: \(what)"
            }
        }
    }

    /// One segment as a request carries it.
    struct Segment: Equatable {
        let number: Int
        let total: Int
        let data: [UInt8]
    }

    /// The most segments a message may have and how far ahead of the next expected one a
    /// segment may be: a message of `maxMessageBytes` in base64, in the SDK's segment size.
    let window: Int
    let maxHeldBytes: Int
    /// The number of the next segment to take.
    private(set) var next = 0
    private var waiting: [Int: Segment] = [:]
    /// The base64 text of the message under way, and how many segments it still needs.
    private var text: [UInt8] = []
    private var remaining = 0
    private var total = 0
    /// Bytes of text held: waiting segments and the message under way.
    private(set) var heldBytes = 0

    /// The SDK's longest segment of data (`MAX_URL_DATA_SIZE - SEG_HEADER_SIZE`).
    static let segmentCharacters = 1_840

    init(maxMessageBytes: Int) {
        // Base64 makes four characters of three bytes.
        let encoded = maxMessageBytes / 3 * 4 + 4
        maxHeldBytes = encoded
        window = encoded / Self.segmentCharacters + 2
    }

    /// Takes a request's segments and returns the messages they complete, in order (each the
    /// JSON text the client sent). A segment already taken is ignored (a request the browser
    /// sent twice).
    mutating func add(_ segments: [Segment]) throws(Refusal) -> [[UInt8]] {
        for segment in segments {
            guard segment.number >= next else { continue }
            guard segment.number - next < window else { throw .outOfRange("segment \(segment.number) while \(next) is expected") }
            guard (1...window).contains(segment.total) else { throw .outOfRange("a message of \(segment.total) segments") }
            guard segment.data.count <= Self.segmentCharacters * 2 else { throw .outOfRange("a segment of \(segment.data.count) characters") }
            if let earlier = waiting[segment.number] {
                guard earlier == segment else { throw .malformed("segment \(segment.number) sent twice with different data") }
                continue
            }
            heldBytes += segment.data.count
            guard heldBytes <= maxHeldBytes else { throw .tooLarge(maxHeldBytes) }
            waiting[segment.number] = segment
        }
        var messages: [[UInt8]] = []
        while let segment = waiting.removeValue(forKey: next) {
            if remaining == 0 {
                remaining = segment.total
                total = segment.total
            } else if segment.total != total {
                throw .malformed("segment \(segment.number) says its message has \(segment.total) segments, not \(total)")
            }
            text += segment.data
            remaining -= 1
            next += 1
            guard remaining == 0 else { continue }
            heldBytes -= text.count
            guard let message = WebSafeBase64.decode(text) else { throw .malformed("a message that is not base64") }
            text = []
            messages.append(message)
        }
        return messages
    }
}
