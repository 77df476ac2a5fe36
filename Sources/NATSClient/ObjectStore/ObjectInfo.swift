/// An object's meta record: where its chunks are and how to check them (size, chunk count,
/// SHA-256 digest). Stored as JSON in the names other NATS clients use.
public struct ObjectInfo: Sendable, Hashable, Codable {
    /// The object name.
    public var name: String
    /// The bucket.
    public var bucket: String
    /// The id naming the chunk subject `$O.<bucket>.C.<nuid>`.
    public var nuid: String
    /// Total bytes.
    public var size: UInt64
    /// Number of chunks.
    public var chunks: UInt64
    /// `SHA-256=` plus the URL-safe base64 digest of the bytes.
    public var digest: String
    /// When the record was written (RFC 3339).
    public var modified: String
    /// Whether this record marks a deleted object.
    public var deleted: Bool

    private enum CodingKeys: String, CodingKey {
        case name, bucket, nuid, size, chunks, digest, deleted
        case modified = "mtime"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        bucket = try c.decodeIfPresent(String.self, forKey: .bucket) ?? ""
        nuid = try c.decodeIfPresent(String.self, forKey: .nuid) ?? ""
        size = try c.decodeIfPresent(UInt64.self, forKey: .size) ?? 0
        chunks = try c.decodeIfPresent(UInt64.self, forKey: .chunks) ?? 0
        digest = try c.decodeIfPresent(String.self, forKey: .digest) ?? ""
        modified = try c.decodeIfPresent(String.self, forKey: .modified) ?? ""
        deleted = try c.decodeIfPresent(Bool.self, forKey: .deleted) ?? false
    }

    init(name: String, bucket: String, nuid: String, size: UInt64, chunks: UInt64, digest: String, modified: String, deleted: Bool) {
        self.name = name
        self.bucket = bucket
        self.nuid = nuid
        self.size = size
        self.chunks = chunks
        self.digest = digest
        self.modified = modified
        self.deleted = deleted
    }
}
