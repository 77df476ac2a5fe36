/// What was wrong with bytes the server sent. The parser throws it and the connection closes, because
/// a stream that lost its framing cannot be trusted again; reconnecting starts from a clean parser.
public struct NATSProtocolError: Error, Hashable, CustomStringConvertible {
    private enum Base: Hashable {
        case controlLineTooLong
        case unknownOperation
        case malformedArguments
        case sizeOutOfRange
        case missingPayloadTerminator
        case malformedHeaders
        case malformedInfo
    }

    private let base: Base
    /// A short note on the offending input, for logs.
    public let detail: String

    private init(_ base: Base, _ detail: String) {
        self.base = base
        self.detail = detail
    }

    /// A control line longer than the parser accepts (no CRLF within the limit).
    public static func controlLineTooLong(_ detail: String = "") -> Self { Self(.controlLineTooLong, detail) }
    /// An operation name the protocol does not define.
    public static func unknownOperation(_ detail: String = "") -> Self { Self(.unknownOperation, detail) }
    /// The wrong number or shape of arguments for an operation.
    public static func malformedArguments(_ detail: String = "") -> Self { Self(.malformedArguments, detail) }
    /// A size that is not a decimal number or exceeds the limit (max_payload from INFO).
    public static func sizeOutOfRange(_ detail: String = "") -> Self { Self(.sizeOutOfRange, detail) }
    /// A message body not followed by CRLF.
    public static func missingPayloadTerminator(_ detail: String = "") -> Self { Self(.missingPayloadTerminator, detail) }
    /// A header block that does not start with NATS/1.0 or has a line without a colon.
    public static func malformedHeaders(_ detail: String = "") -> Self { Self(.malformedHeaders, detail) }
    /// An INFO whose JSON could not be decoded.
    public static func malformedInfo(_ detail: String = "") -> Self { Self(.malformedInfo, detail) }

    /// Errors compare by kind only; the detail is for people.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.base == rhs.base }
    public func hash(into hasher: inout Hasher) { hasher.combine(base) }

    public var description: String { "NATS protocol error: \(base) \(detail)" }
}
