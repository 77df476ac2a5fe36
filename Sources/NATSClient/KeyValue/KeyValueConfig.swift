/// A key-value bucket's settings. `ttl` is the stream's max age: an entry not rewritten within it
/// disappears, which is how a lease expires.
public struct KeyValueConfig: Sendable, Hashable {
    /// The bucket name (letters, digits, `-` and `_`).
    public var bucket: String
    /// Revisions kept per key (1 to 64).
    public var history: Int = 1
    /// How long an entry lives after its last write; zero keeps entries forever.
    public var ttl: Duration = .zero
    /// File or memory storage.
    public var storage: StreamStorage = .file
    /// Copies kept in a cluster.
    public var replicas: Int = 1

    /// A bucket with one revision per key, no TTL, file storage, one replica.
    public init(bucket: String) {
        self.bucket = bucket
    }

    /// The stream that holds the bucket: `KV_<bucket>` over `$KV.<bucket>.>`, the layout other
    /// NATS clients use, so they can share the bucket.
    func streamConfig() throws(JetStreamError) -> StreamConfig {
        guard !bucket.isEmpty, bucket.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw .invalidArgument("bad bucket name \(bucket.debugDescription)")
        }
        guard (1...64).contains(history) else { throw .invalidArgument("history \(history) not in 1...64") }
        guard ttl >= .zero else { throw .invalidArgument("negative ttl") }
        var config = StreamConfig(name: "KV_\(bucket)", subjects: ["$KV.\(bucket).>"])
        config.maxMessagesPerSubject = Int64(history)
        config.maxAge = ttl
        config.storage = storage
        config.replicas = replicas
        config.discard = .new
        config.allowRollupHeaders = true
        config.denyDelete = true
        config.allowDirect = true
        // The server refuses a duplicate window longer than max age.
        if ttl > .zero, ttl < .seconds(120) { config.duplicateWindow = ttl }
        return config
    }
}
