/// A stream's configuration, the subset this client needs: subjects, storage, replicas, limits
/// (max age doubles as a key-value TTL), rollups and delete protection for key-value buckets, and
/// direct gets. Fields left at their defaults mean "no limit" to the server.
public struct StreamConfig: Sendable, Hashable, Codable {
    /// The stream name (no spaces, dots, `*`, `>`).
    public var name: String
    /// The subjects the stream captures.
    public var subjects: [String]
    /// File or memory storage.
    public var storage: StreamStorage = .file
    /// How many servers hold a copy (1, 3 or 5 in practice).
    public var replicas: Int = 1
    /// Messages older than this are removed; zero keeps them forever.
    public var maxAge: Duration = .zero
    /// The most messages kept; -1 is unlimited.
    public var maxMessages: Int64 = -1
    /// The most bytes kept; -1 is unlimited.
    public var maxBytes: Int64 = -1
    /// The most messages kept per subject (key-value history); -1 is unlimited.
    public var maxMessagesPerSubject: Int64 = -1
    /// Whether limits drop old messages or refuse new ones.
    public var discard: StreamDiscardPolicy = .old
    /// The window in which a repeated Nats-Msg-Id is treated as a duplicate; zero takes the
    /// server's default (two minutes, or max age when shorter).
    public var duplicateWindow: Duration = .zero
    /// Whether a Nats-Rollup header may purge a subject (key-value purge).
    public var allowRollupHeaders = false
    /// Whether deleting single messages is refused.
    public var denyDelete = false
    /// Whether purging is refused.
    public var denyPurge = false
    /// Whether any replica may answer direct gets.
    public var allowDirect = false

    /// A stream with the given name and subjects and default limits.
    public init(name: String, subjects: [String]) {
        self.name = name
        self.subjects = subjects
    }

    private enum CodingKeys: String, CodingKey {
        case name, subjects, storage, discard
        case replicas = "num_replicas"
        case maxAge = "max_age"
        case maxMessages = "max_msgs"
        case maxBytes = "max_bytes"
        case maxMessagesPerSubject = "max_msgs_per_subject"
        case duplicateWindow = "duplicate_window"
        case allowRollupHeaders = "allow_rollup_hdrs"
        case denyDelete = "deny_delete"
        case denyPurge = "deny_purge"
        case allowDirect = "allow_direct"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        subjects = try c.decodeIfPresent([String].self, forKey: .subjects) ?? []
        storage = try c.decodeIfPresent(StreamStorage.self, forKey: .storage) ?? .file
        replicas = try c.decodeIfPresent(Int.self, forKey: .replicas) ?? 1
        maxAge = .nanoseconds(try c.decodeIfPresent(Int64.self, forKey: .maxAge) ?? 0)
        maxMessages = try c.decodeIfPresent(Int64.self, forKey: .maxMessages) ?? -1
        maxBytes = try c.decodeIfPresent(Int64.self, forKey: .maxBytes) ?? -1
        maxMessagesPerSubject = try c.decodeIfPresent(Int64.self, forKey: .maxMessagesPerSubject) ?? -1
        discard = try c.decodeIfPresent(StreamDiscardPolicy.self, forKey: .discard) ?? .old
        duplicateWindow = .nanoseconds(try c.decodeIfPresent(Int64.self, forKey: .duplicateWindow) ?? 0)
        allowRollupHeaders = try c.decodeIfPresent(Bool.self, forKey: .allowRollupHeaders) ?? false
        denyDelete = try c.decodeIfPresent(Bool.self, forKey: .denyDelete) ?? false
        denyPurge = try c.decodeIfPresent(Bool.self, forKey: .denyPurge) ?? false
        allowDirect = try c.decodeIfPresent(Bool.self, forKey: .allowDirect) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(subjects, forKey: .subjects)
        try c.encode(storage, forKey: .storage)
        try c.encode(replicas, forKey: .replicas)
        try c.encode(maxAge.nanoseconds, forKey: .maxAge)
        try c.encode(maxMessages, forKey: .maxMessages)
        try c.encode(maxBytes, forKey: .maxBytes)
        try c.encode(maxMessagesPerSubject, forKey: .maxMessagesPerSubject)
        try c.encode(discard, forKey: .discard)
        if duplicateWindow > .zero { try c.encode(duplicateWindow.nanoseconds, forKey: .duplicateWindow) }
        try c.encode(allowRollupHeaders, forKey: .allowRollupHeaders)
        try c.encode(denyDelete, forKey: .denyDelete)
        try c.encode(denyPurge, forKey: .denyPurge)
        try c.encode(allowDirect, forKey: .allowDirect)
    }
}

extension Duration {
    /// Whole nanoseconds, as the JetStream API writes durations (saturating far beyond any limit).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        return scaled.addingReportingOverflow(attoseconds / 1_000_000_000).overflow ? .max : scaled + attoseconds / 1_000_000_000
    }
}
