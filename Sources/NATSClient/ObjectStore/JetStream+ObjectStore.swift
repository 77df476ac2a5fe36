extension JetStream {
    /// Creates (or opens, when the settings match) an object store bucket.
    public func createObjectStore(_ config: ObjectStoreConfig) async throws(JetStreamError) -> ObjectStore {
        _ = try await createStream(try config.streamConfig())
        return ObjectStore(bucket: config.bucket, chunkSize: config.chunkSize, jetStream: self)
    }

    /// Opens an object store bucket that exists (made by another client, perhaps with other
    /// settings); objects put through it are cut in `chunkSize` chunks.
    public func objectStore(_ bucket: String, chunkSize: Int = 128 * 1024) async throws(JetStreamError) -> ObjectStore {
        _ = try await streamInfo("OBJ_\(bucket)")
        return ObjectStore(bucket: bucket, chunkSize: chunkSize, jetStream: self)
    }
}
