/// The stream's acknowledgement of a publish: where the message went and whether it was a repeat
/// of a Nats-Msg-Id already stored (then `sequence` is the original's).
public struct PubAck: Sendable, Hashable, Decodable {
    /// The stream that stored it.
    public var stream: String
    /// Its sequence in that stream.
    public var sequence: UInt64
    /// Whether the message id was seen within the duplicate window and nothing new was stored.
    public var duplicate: Bool

    private enum CodingKeys: String, CodingKey {
        case stream
        case sequence = "seq"
        case duplicate
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        stream = try c.decode(String.self, forKey: .stream)
        sequence = try c.decode(UInt64.self, forKey: .sequence)
        duplicate = try c.decodeIfPresent(Bool.self, forKey: .duplicate) ?? false
    }
}
