/// Preconditions and identity for a JetStream publish. The expected sequences are how a writer is
/// fenced: the stream stores the message only if its (or the subject's) last sequence matches.
public struct PublishOptions: Sendable, Hashable {
    /// Nats-Msg-Id: a retry with the same id within the duplicate window stores nothing new.
    public var messageID: String?
    /// Nats-Expected-Last-Sequence: the stream's last sequence must be this.
    public var expectedLastSequence: UInt64?
    /// Nats-Expected-Last-Subject-Sequence: the last sequence on this subject must be this (0 = none).
    public var expectedLastSubjectSequence: UInt64?
    /// Nats-Expected-Stream: the subject must be captured by this stream.
    public var expectedStream: String?

    /// No preconditions.
    public init(
        messageID: String? = nil, expectedLastSequence: UInt64? = nil, expectedLastSubjectSequence: UInt64? = nil, expectedStream: String? = nil
    ) {
        self.messageID = messageID
        self.expectedLastSequence = expectedLastSequence
        self.expectedLastSubjectSequence = expectedLastSubjectSequence
        self.expectedStream = expectedStream
    }

    /// Adds the headers these options stand for.
    func apply(to headers: inout NATSHeaders) {
        if let messageID { headers.set("Nats-Msg-Id", messageID) }
        if let expectedLastSequence { headers.set("Nats-Expected-Last-Sequence", String(expectedLastSequence)) }
        if let expectedLastSubjectSequence { headers.set("Nats-Expected-Last-Subject-Sequence", String(expectedLastSubjectSequence)) }
        if let expectedStream { headers.set("Nats-Expected-Stream", expectedStream) }
    }
}
