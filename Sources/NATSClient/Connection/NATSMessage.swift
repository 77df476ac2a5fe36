/// A message as a subscriber sees it: the subject it was published to, where to reply, its headers
/// (with the server's status, if any) and its payload bytes.
public struct NATSMessage: Sendable, Hashable {
    /// The subject the message was published on.
    public var subject: String
    /// The reply subject, when the publisher expects an answer.
    public var reply: String?
    /// Headers, nil when the message came as plain MSG.
    public var headers: NATSHeaders?
    /// The payload bytes.
    public var payload: [UInt8]

    /// Makes a message (for tests and for handing on).
    public init(subject: String, reply: String? = nil, headers: NATSHeaders? = nil, payload: [UInt8] = []) {
        self.subject = subject
        self.reply = reply
        self.headers = headers
        self.payload = payload
    }

    /// The server's status code, when this is a status message (503, 100, 404, 408 ...).
    public var status: Int? { headers?.status }
}
