/// Why a path, key, value or write was refused.
///
/// Every refusal of client input in the core is one of these; the server maps `kind` to a wire
/// status or HTTP code in one place. The message names the offending key, path or value so a
/// developer can find it in their own data.
public struct ValidationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The closed set of reasons.
    public enum Kind: String, Sendable {
        /// A key is empty or holds `. $ # [ ] /` or a control character.
        case invalidKey
        /// A key is longer than 768 bytes of UTF-8.
        case keyTooLong
        /// A path is malformed (for example `.priority` in the middle).
        case invalidPath
        /// A path or value nests deeper than 32 levels.
        case tooDeep
        /// A string is longer than 10 MB of UTF-8.
        case stringTooLong
        /// A number is NaN or infinite, or out of the double range.
        case invalidNumber
        /// A priority is not a string, a finite number, a server value or null.
        case invalidPriority
        /// A `.sv` placeholder is not one Kindling knows.
        case invalidServerValue
        /// A value's shape is not allowed (`.value` beside children, a bad `.` key).
        case invalidData
        /// An update names overlapping paths, or none.
        case invalidUpdate
        /// Text that is not JSON.
        case invalidJSON
        /// A query whose parameters are missing, malformed or contradictory.
        case invalidQuery
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    static func invalidKey(_ key: String) -> Self {
        .init(
            .invalidKey,
            "Invalid key \(quoted(key)): keys must be non-empty and can't contain \".\", \"#\", \"$\", \"/\", \"[\", \"]\" or ASCII control characters"
        )
    }

    static func keyTooLong(_ key: String) -> Self {
        .init(.keyTooLong, "Key \(quoted(key)) is longer than \(Key.maxByteCount) bytes of UTF-8 (\(key.utf8.count) bytes)")
    }

    static func tooDeep(_ path: String) -> Self {
        .init(.tooDeep, "Path \(quoted(path)) exceeds the maximum depth of \(Path.maxDepth) levels")
    }

    /// Quotes and shortens client text for an error message.
    public static func quoted(_ text: String) -> String {
        let limit = 100
        var shown = text.count > limit ? String(text.prefix(limit)) + "…" : text
        shown = shown.unicodeScalars.map { scalar in
            guard scalar.value < 32 || scalar.value == 127 else { return String(scalar) }
            let hex = String(scalar.value, radix: 16)
            return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        }.joined()
        return "\"" + shown + "\""
    }
}
