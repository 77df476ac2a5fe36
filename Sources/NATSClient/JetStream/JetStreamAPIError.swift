/// An error the JetStream API answered with: the HTTP-like `code`, the stable `err_code` that says
/// exactly what was refused, and the server's description. Callers branch on `errCode`; the
/// constants below name the ones a replicated log and a lease need.
public struct JetStreamAPIError: Sendable, Hashable, Decodable, CustomStringConvertible {
    /// The HTTP-like status (400, 404, 503 ...).
    public var code: Int
    /// The JetStream error code (10071 wrong last sequence ...), 0 when the server gave none.
    public var errCode: Int
    /// The server's text.
    public var errorDescription: String

    /// A publish was fenced: the stream's (or subject's) last sequence is not the expected one.
    public static let wrongLastSequence = 10071
    /// The same refusal from a replicated stream (nats-server 2.11 and later) while another
    /// publish expecting a last sequence of the subject is being proposed: nothing was stored.
    public static let wrongLastSequenceInFlight = 10164
    /// A Nats-Expected-Stream header named another stream.
    public static let streamNotMatch = 10060
    /// No such stream.
    public static let streamNotFound = 10059
    /// No message at that sequence or for that subject.
    public static let noMessageFound = 10037
    /// No such consumer.
    public static let consumerNotFound = 10014
    /// A stream with that name exists with a different configuration.
    public static let streamNameInUse = 10058
    /// JetStream cannot answer yet (503): no meta leader known, as while it recovers after a
    /// restart.
    public static let temporarilyUnavailable = 10008
    /// Not enough servers to place the stream's replicas on: a cluster still forming (a server
    /// not yet joined), or too few servers for the replicas asked.
    public static let noSuitablePeers = 10005

    /// Makes an error (for tests).
    public init(code: Int, errCode: Int, description: String) {
        self.code = code
        self.errCode = errCode
        self.errorDescription = description
    }

    private enum CodingKeys: String, CodingKey {
        case code
        case errCode = "err_code"
        case errorDescription = "description"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        code = try container.decodeIfPresent(Int.self, forKey: .code) ?? 0
        errCode = try container.decodeIfPresent(Int.self, forKey: .errCode) ?? 0
        errorDescription = try container.decodeIfPresent(String.self, forKey: .errorDescription) ?? ""
    }

    public var description: String { "JetStream \(code) (\(errCode)): \(errorDescription)" }
}
