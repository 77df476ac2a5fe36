/// An object store bucket's settings.
public struct ObjectStoreConfig: Sendable, Hashable {
    /// The bucket name (letters, digits, `-` and `_`).
    public var bucket: String
    /// File or memory storage.
    public var storage: StreamStorage = .file
    /// Copies kept in a cluster.
    public var replicas: Int = 1
    /// How long objects live; zero keeps them.
    public var ttl: Duration = .zero
    /// The size of each chunk message; well under max_payload so a chunk never hits the limit.
    public var chunkSize: Int = 128 * 1024

    /// A bucket with file storage, one replica, 128 KiB chunks.
    public init(bucket: String) {
        self.bucket = bucket
    }

    /// The stream that holds the bucket: `OBJ_<bucket>` with chunks on `$O.<bucket>.C.<id>` and
    /// one rolled-up meta record per object on `$O.<bucket>.M.<encoded name>`, as other NATS
    /// clients lay it out.
    func streamConfig() throws(JetStreamError) -> StreamConfig {
        guard !bucket.isEmpty, bucket.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw .invalidArgument("bad bucket name \(bucket.debugDescription)")
        }
        guard (1...(8 * 1024 * 1024)).contains(chunkSize) else { throw .invalidArgument("chunk size \(chunkSize)") }
        var config = StreamConfig(name: "OBJ_\(bucket)", subjects: ["$O.\(bucket).C.>", "$O.\(bucket).M.>"])
        config.storage = storage
        config.replicas = replicas
        config.maxAge = ttl
        config.discard = .new
        config.allowRollupHeaders = true
        config.allowDirect = true
        if ttl > .zero, ttl < .seconds(120) { config.duplicateWindow = ttl }
        return config
    }
}
