import KindlingCore

extension DatabaseReference {
    /// Writes a `Codable` model here, as `setValue` writes JSON.
    ///
    /// An optional that is nil leaves its key out, an array is written as one, a `Date` as
    /// milliseconds since 1970, and a `@ServerTimestamp` that is nil as the server's clock.
    /// - Parameters:
    ///   - value: The model.
    ///   - encoder: Carries the date strategy.
    /// - Throws: `.invalidArgument` when the model holds what JSON cannot (a non-finite number,
    ///   an integer beyond 2^53), and the server's refusal otherwise.
    public func setValue(from value: some Encodable, encoder: JSONValueEncoder = JSONValueEncoder()) async throws(DatabaseError) {
        try await setValue(Self.encode(value, encoder))
    }

    /// Writes a `Codable` model here without waiting, as FirebaseDatabaseSwift's `setValue(from:)`:
    /// throws when the model cannot be encoded; `completion` runs on the callback queue when the
    /// server has answered.
    public func setValue(
        from value: some Encodable, encoder: JSONValueEncoder = JSONValueEncoder(), completion: (@Sendable ((any Error)?) -> Void)? = nil
    ) throws(DatabaseError) {
        let json = try Self.encode(value, encoder)
        setValue(json) { error, _ in completion?(error) }
    }

    /// Writes the members of a `Codable` model here, each as its own child, leaving the other
    /// children alone (an update, where `setValue(from:)` replaces everything): a model's nil
    /// optional leaves its child as it is.
    public func updateChildValues(from value: some Encodable, encoder: JSONValueEncoder = JSONValueEncoder()) async throws(DatabaseError) {
        guard case .object(let members) = try Self.encode(value, encoder) else {
            throw .invalidArgument("An update needs a model with members, not \(type(of: value))")
        }
        try await updateChildValues(Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 }))
    }

    /// Encodes a model for a write, with the encoder's complaint as the reason.
    static func encode(_ value: some Encodable, _ encoder: JSONValueEncoder) throws(DatabaseError) -> JSONValue {
        do {
            return try encoder.encode(value)
        } catch {
            throw .invalidArgument("Cannot encode \(type(of: value)): \(error)")
        }
    }
}

extension OnDisconnect {
    /// Queues a write of a `Codable` model for when this client disconnects (see
    /// `DatabaseReference.setValue(from:encoder:)` for how it is encoded).
    public func setValue(from value: some Encodable, encoder: JSONValueEncoder = JSONValueEncoder()) async throws(DatabaseError) {
        try await setValue(DatabaseReference.encode(value, encoder))
    }
}
