extension JetStream {
    /// Creates (or, if it exists with the same settings, opens) a key-value bucket.
    public func createKeyValue(_ config: KeyValueConfig) async throws(JetStreamError) -> KeyValue {
        _ = try await createStream(try config.streamConfig())
        return KeyValue(bucket: config.bucket, jetStream: self)
    }

    /// Opens an existing bucket; fails with stream-not-found (10059) when there is none.
    public func keyValue(_ bucket: String) async throws(JetStreamError) -> KeyValue {
        try Self.validateName(bucket)
        _ = try await streamInfo("KV_\(bucket)")
        return KeyValue(bucket: bucket, jetStream: self)
    }
}
