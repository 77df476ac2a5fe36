import Foundation

/// JetStream over a NATS connection: the `$JS.API` request/reply calls for streams and messages,
/// and publishes that wait for the stream's acknowledgement. A value type; copy it freely.
public struct JetStream: Sendable {
    /// The connection requests go over.
    public let client: NATSClient
    /// How long to wait for each API answer or publish acknowledgement.
    public var timeout: Duration
    /// The API subject prefix (`$JS.API`, or a domain's).
    public var apiPrefix: String

    /// JetStream on `client`.
    public init(client: NATSClient, timeout: Duration = .seconds(2), apiPrefix: String = "$JS.API") {
        self.client = client
        self.timeout = timeout
        self.apiPrefix = apiPrefix
    }

    // MARK: Streams

    /// Creates a stream; an existing stream with the same configuration is returned as is.
    public func createStream(_ config: StreamConfig) async throws(JetStreamError) -> StreamInfo {
        try Self.validateName(config.name)
        return try await api("STREAM.CREATE.\(config.name)", body: config)
    }

    /// Changes a stream's configuration (limits, replicas; not its storage).
    public func updateStream(_ config: StreamConfig) async throws(JetStreamError) -> StreamInfo {
        try Self.validateName(config.name)
        return try await api("STREAM.UPDATE.\(config.name)", body: config)
    }

    /// The stream's configuration, state and leader.
    public func streamInfo(_ name: String) async throws(JetStreamError) -> StreamInfo {
        try Self.validateName(name)
        return try await api("STREAM.INFO.\(name)", body: nil as String?)
    }

    /// Deletes a stream and everything in it.
    public func deleteStream(_ name: String) async throws(JetStreamError) {
        try Self.validateName(name)
        let _: SuccessResponse = try await api("STREAM.DELETE.\(name)", body: nil as String?)
    }

    // MARK: Messages

    /// Publishes and waits for the stream's acknowledgement. A stale expected sequence comes back
    /// as `JetStreamError` with `isWrongLastSequence`; that the message was not stored, only
    /// `provesLaterMessage` tells. So a refusal naming a sequence at or before the expected one
    /// does not end the wait: the stream's real leader may acknowledge the message after a stale
    /// one refused it so, and its answer is taken; the refusal is returned only if none comes
    /// within the timeout (`settles`), or within `grace` of the refusal when given.
    public func publish(
        _ subject: String, payload: [UInt8] = [], headers: NATSHeaders? = nil, options: PublishOptions = PublishOptions(),
        grace: Duration? = nil
    ) async throws(JetStreamError) -> PubAck {
        var allHeaders = headers ?? NATSHeaders()
        options.apply(to: &allHeaders)
        let expected = options.expectedLastSubjectSequence ?? options.expectedLastSequence
        let reply: NATSMessage
        do {
            reply = try await client.request(
                subject, payload: payload, headers: allHeaders.isEmpty ? nil : allHeaders, timeout: timeout,
                until: expected.map { expected -> @Sendable (NATSMessage) -> Bool in { Self.settles($0.payload, expecting: expected) } },
                grace: grace)
        } catch {
            throw .transport(error)
        }
        return try Self.decode(reply.payload)
    }

    /// Whether a reply settles a publish that expected last sequence `expected`: anything but a
    /// 10071 naming the expected sequence or an earlier one, which only a server whose store
    /// lacks the expected message gives. A 10164 settles it: it proves nothing either, but two
    /// writers racing for one subject get it from the real leader (two nodes taking a lapsed
    /// lease), and the loser would wait out the timeout. Only a reply naming a wrong last
    /// sequence is decoded.
    static func settles(_ payload: [UInt8], expecting expected: UInt64) -> Bool {
        guard payload.firstRange(of: wrongLastSequenceText) != nil,
            let envelope = try? JSONDecoder().decode(ErrorEnvelope.self, from: Data(payload)), let error = envelope.error,
            let named = JetStreamError.api(error).namedLastSequence
        else { return true }
        return named > expected
    }

    private static let wrongLastSequenceText = Array("wrong last sequence".utf8)

    /// The message at `sequence`, read through the stream leader.
    public func message(stream: String, sequence: UInt64) async throws(JetStreamError) -> StoredMessage {
        try await getMessage(stream: stream, request: MessageGetRequest(sequence: sequence))
    }

    /// The first message on `subject` at stream sequence `sequence` or after it, read through
    /// the stream leader; `JetStreamAPIError.noMessageFound` when there is none.
    public func nextMessage(stream: String, subject: String, from sequence: UInt64) async throws(JetStreamError) -> StoredMessage {
        try await getMessage(stream: stream, request: MessageGetRequest(sequence: sequence, nextBySubject: subject))
    }

    /// The last message on `subject`, read through the stream leader (so it sees every
    /// acknowledged write: what a lease check needs).
    public func lastMessage(stream: String, subject: String) async throws(JetStreamError) -> StoredMessage {
        try await getMessage(stream: stream, request: MessageGetRequest(lastBySubject: subject))
    }

    /// Deletes one message.
    public func deleteMessage(stream: String, sequence: UInt64) async throws(JetStreamError) {
        try Self.validateName(stream)
        let _: SuccessResponse = try await api("STREAM.MSG.DELETE.\(stream)", body: MessageDeleteRequest(sequence: sequence))
    }

    /// Removes messages from a stream, all of them or only those on `subject`; with `before`,
    /// only those whose stream sequence is lower than it.
    public func purgeStream(_ name: String, subject: String? = nil, before: UInt64? = nil) async throws(JetStreamError) {
        try Self.validateName(name)
        let _: SuccessResponse = try await api("STREAM.PURGE.\(name)", body: PurgeRequest(filter: subject, seq: before))
    }

    /// Reads a stream in order from `startSequence`: every message once, with its stream
    /// sequence, recovering by itself from reconnects and lost consumers. Returns once the first
    /// server-side consumer exists (and fails if it cannot be created, e.g. no such stream).
    public func orderedConsumer(stream: String, startSequence: UInt64 = 1, filterSubject: String? = nil, heartbeat: Duration = .seconds(2))
        async throws(JetStreamError) -> OrderedConsumer
    {
        try Self.validateName(stream)
        return try await OrderedConsumer(
            jetStream: self, stream: stream, startSequence: max(1, startSequence), filterSubject: filterSubject, heartbeat: heartbeat)
    }

    private func getMessage(stream: String, request: MessageGetRequest) async throws(JetStreamError) -> StoredMessage {
        try Self.validateName(stream)
        let response: MessageGetResponse = try await api("STREAM.MSG.GET.\(stream)", body: request)
        let raw = response.message
        var headers: NATSHeaders?
        if let encoded = raw.hdrs, !encoded.isEmpty {
            guard let bytes = Data(base64Encoded: encoded) else { throw .malformedResponse("headers not base64") }
            do {
                headers = try NATSHeaders.decode(Array(bytes)[...])
            } catch {
                throw .malformedResponse("\(error)")
            }
        }
        guard let payload = Data(base64Encoded: raw.data ?? "") else { throw .malformedResponse("data not base64") }
        return StoredMessage(subject: raw.subject, sequence: raw.seq, headers: headers, payload: Array(payload), time: raw.time ?? "")
    }

    // MARK: API plumbing

    /// One API call: JSON in, JSON out, the error envelope turned into `JetStreamError.api`.
    func api<Response: Decodable>(_ subject: String, body: (some Encodable)?) async throws(JetStreamError) -> Response {
        var payload: [UInt8] = []
        if let body {
            do {
                payload = Array(try JSONEncoder().encode(body))
            } catch {
                throw .invalidArgument("\(error)")
            }
        }
        let reply: NATSMessage
        do {
            reply = try await client.request("\(apiPrefix).\(subject)", payload: payload, timeout: timeout)
        } catch {
            throw .transport(error)
        }
        return try Self.decode(reply.payload)
    }

    static func decode<Response: Decodable>(_ payload: [UInt8]) throws(JetStreamError) -> Response {
        let data = Data(payload)
        let decoder = JSONDecoder()
        if let envelope = try? decoder.decode(ErrorEnvelope.self, from: data), let error = envelope.error {
            throw .api(error)
        }
        do {
            return try decoder.decode(Response.self, from: data)
        } catch {
            throw .malformedResponse("\(error): \(String(decoding: payload.prefix(200), as: UTF8.self))")
        }
    }

    static func validateName(_ name: String) throws(JetStreamError) {
        guard !name.isEmpty,
            name.utf8.allSatisfy({ $0 > 32 && $0 != 127 && $0 != UInt8(ascii: ".") && $0 != UInt8(ascii: "*") && $0 != UInt8(ascii: ">") })
        else {
            throw .invalidArgument("bad name \(name.debugDescription)")
        }
    }

    private struct ErrorEnvelope: Decodable {
        var error: JetStreamAPIError?
    }

    private struct SuccessResponse: Decodable {}

    private struct MessageGetRequest: Encodable {
        var sequence: UInt64?
        var lastBySubject: String?
        var nextBySubject: String?
        enum CodingKeys: String, CodingKey {
            case sequence = "seq"
            case lastBySubject = "last_by_subj"
            case nextBySubject = "next_by_subj"
        }
    }

    private struct MessageDeleteRequest: Encodable {
        var sequence: UInt64
        var noErase = true
        enum CodingKeys: String, CodingKey {
            case sequence = "seq"
            case noErase = "no_erase"
        }
    }

    private struct PurgeRequest: Encodable {
        var filter: String?
        /// Purge below this stream sequence only.
        var seq: UInt64?
    }

    private struct MessageGetResponse: Decodable {
        var message: RawMessage
    }

    private struct RawMessage: Decodable {
        var subject: String
        var seq: UInt64
        var hdrs: String?
        var data: String?
        var time: String?
    }
}
