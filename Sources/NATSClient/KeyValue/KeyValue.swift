/// A key-value bucket on a JetStream stream. Writes are publishes with an expected last subject
/// sequence, so `create` (only if absent) and `update` (only at a revision) are atomic on the
/// stream leader: what a leader lease needs.
public struct KeyValue: Sendable {
    /// The bucket name.
    public let bucket: String
    private let jetStream: JetStream
    private var streamName: String { "KV_\(bucket)" }

    init(bucket: String, jetStream: JetStream) {
        self.bucket = bucket
        self.jetStream = jetStream
    }

    /// The same bucket, its requests answered within `timeout` (or failing with a timeout).
    public func withTimeout(_ timeout: Duration) -> KeyValue {
        var jetStream = self.jetStream
        jetStream.timeout = timeout
        return KeyValue(bucket: bucket, jetStream: jetStream)
    }

    /// Writes a value unconditionally; returns the new revision.
    @discardableResult
    public func put(_ key: String, _ value: [UInt8]) async throws(JetStreamError) -> UInt64 {
        try await jetStream.publish(try subject(key), payload: value).sequence
    }

    /// Writes only if the key has no value: absent, expired, deleted or purged. Exactly one of
    /// several contenders wins; the others get `isWrongLastSequence`.
    @discardableResult
    public func create(_ key: String, _ value: [UInt8]) async throws(JetStreamError) -> UInt64 {
        let first: JetStreamError
        do {
            return try await jetStream.publish(try subject(key), payload: value, options: PublishOptions(expectedLastSubjectSequence: 0)).sequence
        } catch {
            first = error
        }
        guard first.isWrongLastSequence, let marker = try await entry(key), marker.operation != .put else { throw first }
        do {
            return try await update(key, value, revision: marker.revision)
        } catch {
            throw first
        }
    }

    /// Writes only if the key's latest revision is `revision` (compare-and-set); a stale revision
    /// fails with `isWrongLastSequence` and writes nothing. A refusal that does not prove the key
    /// moved on is returned after `grace` instead of the whole timeout when given
    /// (`JetStream.publish`), for a caller that reads the key to settle it.
    @discardableResult
    public func update(_ key: String, _ value: [UInt8], revision: UInt64, grace: Duration? = nil) async throws(JetStreamError) -> UInt64 {
        try await jetStream.publish(
            try subject(key), payload: value, options: PublishOptions(expectedLastSubjectSequence: revision), grace: grace
        ).sequence
    }

    /// The current value, nil when the key is absent, expired, deleted or purged.
    public func get(_ key: String) async throws(JetStreamError) -> KeyValueEntry? {
        guard let latest = try await entry(key), latest.operation == .put else { return nil }
        return latest
    }

    /// The latest entry including delete and purge markers, nil when there is none.
    public func entry(_ key: String) async throws(JetStreamError) -> KeyValueEntry? {
        let stored: StoredMessage
        do {
            stored = try await jetStream.lastMessage(stream: streamName, subject: try subject(key))
        } catch {
            if error.apiError?.errCode == JetStreamAPIError.noMessageFound { return nil }
            throw error
        }
        return Self.entry(bucket: bucket, key: key, headers: stored.headers, payload: stored.payload, revision: stored.sequence)
    }

    /// Marks the key deleted (its history stays until it ages out); optionally only at `revision`.
    /// With `messageID`, the delete sent again is stored once, and `lastChange(of:isMessage:)`
    /// tells whether a refused retry found its own first try stored.
    public func delete(_ key: String, revision: UInt64? = nil, messageID: String? = nil) async throws(JetStreamError) {
        var headers = NATSHeaders()
        headers.set("KV-Operation", KeyValueOperation.delete.rawValue)
        _ = try await jetStream.publish(
            try subject(key), headers: headers, options: PublishOptions(messageID: messageID, expectedLastSubjectSequence: revision))
    }

    /// Whether the key's last change is the message published with `messageID` (false when the
    /// key has no history).
    public func lastChange(of key: String, isMessage messageID: String) async throws(JetStreamError) -> Bool {
        do {
            return try await jetStream.lastMessage(stream: streamName, subject: try subject(key)).headers?["Nats-Msg-Id"] == messageID
        } catch {
            if error.apiError?.errCode == JetStreamAPIError.noMessageFound { return false }
            throw error
        }
    }

    /// Removes the key's history, leaving one purge marker.
    public func purge(_ key: String) async throws(JetStreamError) {
        var headers = NATSHeaders()
        headers.set("KV-Operation", KeyValueOperation.purge.rawValue)
        headers.set("Nats-Rollup", "sub")
        _ = try await jetStream.publish(try subject(key), headers: headers)
    }

    /// The key's current entry (if any) and every later change, in order, including delete
    /// markers; stop it with `OrderedConsumer.stop`.
    public func watch(_ key: String, heartbeat: Duration = .seconds(2)) async throws(JetStreamError) -> KeyValueWatch {
        let keySubject = try subject(key)
        let start: UInt64
        if let latest = try await entry(key) {
            start = latest.revision
        } else {
            let last = try await jetStream.streamInfo(streamName).state.lastSequence
            guard last < UInt64.max else { throw .malformedResponse("last sequence \(last)") }
            start = last + 1
        }
        let consumer = try await jetStream.orderedConsumer(stream: streamName, startSequence: start, filterSubject: keySubject, heartbeat: heartbeat)
        return KeyValueWatch(bucket: bucket, key: key, consumer: consumer)
    }

    static func entry(bucket: String, key: String, headers: NATSHeaders?, payload: [UInt8], revision: UInt64) -> KeyValueEntry {
        let operation = headers?["KV-Operation"].flatMap(KeyValueOperation.init(rawValue:)) ?? .put
        return KeyValueEntry(bucket: bucket, key: key, value: payload, revision: revision, operation: operation)
    }

    private func subject(_ key: String) throws(JetStreamError) -> String {
        let allowed: (Character) -> Bool = { $0.isASCII && ($0.isLetter || $0.isNumber || "-/_=.".contains($0)) }
        guard !key.isEmpty, key.allSatisfy(allowed), !key.hasPrefix("."), !key.hasSuffix("."), !key.contains("..") else {
            throw .invalidArgument("bad key \(key.debugDescription)")
        }
        return "$KV.\(bucket).\(key)"
    }
}
