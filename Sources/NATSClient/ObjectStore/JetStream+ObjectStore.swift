extension JetStream {
    /// Creates (or opens, when the settings match) an object store bucket.
    public func createObjectStore(_ config: ObjectStoreConfig) async throws(JetStreamError) -> ObjectStore {
        _ = try await createStream(try config.streamConfig())
        return ObjectStore(bucket: config.bucket, chunkSize: config.chunkSize, jetStream: self)
    }
}
