/// Why `JSONStreamReader` stopped: what was wrong and where, as a byte offset from the start of
/// the whole text, so a user can find the place in a file of gigabytes.
public struct JSONStreamError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The closed set of reasons.
    public enum Kind: Sendable, Equatable {
        /// Text that is not JSON at `offset`.
        case invalid
        /// The text ended before its value did (a cut-off file).
        case truncated
        /// Objects and arrays nest deeper than the reader's `maxNesting`.
        case tooDeep
        /// One string or number is longer than the reader's `maxTokenBytes`.
        case tokenTooLong
    }

    public let kind: Kind
    /// Bytes from the start of the text to where the fault is (the start of the token for a
    /// bad token, the end of the text for a truncated one).
    public let offset: Int
    public let reason: String

    public init(_ kind: Kind, offset: Int, _ reason: String) {
        self.kind = kind
        self.offset = offset
        self.reason = reason
    }

    public var description: String {
        kind == .truncated ? "The JSON ends early at byte \(offset): \(reason)" : "Invalid JSON at byte \(offset): \(reason)"
    }
}
