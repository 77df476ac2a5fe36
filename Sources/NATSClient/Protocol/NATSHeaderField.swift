/// One header line, kept as sent: names keep their case and repeated names keep their order, so a
/// message round-trips byte for byte.
public struct NATSHeaderField: Sendable, Hashable {
    /// The header name (no colon, whitespace or control characters).
    public var name: String
    /// The header value (no CR or LF).
    public var value: String

    /// Makes a field; validation happens when the message is encoded.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
