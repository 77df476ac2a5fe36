import KindlingCore

/// One connection's onDisconnect writes as a node keeps them in `kindling_ondisconnect`, for the
/// leader to run should the node die: the identity they run as, once, then the writes in the
/// order they were queued, each in its `ForwardedWrite` form without the identity.
/// `{"a": identity, "w": [write, ...]}`.
struct StoredRegistrations: Sendable {
    var writes: [ForwardedWrite]

    /// Nil when there is nothing to keep.
    func encoded() -> [UInt8]? {
        guard let auth = writes.first?.auth else { return nil }
        let json = JSONValue.object([
            JSONMember("a", ForwardedWrite.encode(auth)), JSONMember("w", .array(writes.map { .object($0.operationMembers()) })),
        ])
        return Array(JSONWriter.string(json).utf8)
    }

    /// Reads a stored value; throws on anything a node would not have written.
    static func decode(_ bytes: [UInt8]) throws(ValidationError) -> StoredRegistrations {
        let json = try JSONParser.parse(bytes)
        guard let auth = json["a"], case .array(let items)? = json["w"] else {
            throw ValidationError(.invalidData, "stored onDisconnect registrations need a and w")
        }
        var writes: [ForwardedWrite] = []
        for item in items {
            guard case .object(let members) = item else { throw ValidationError(.invalidData, "a stored onDisconnect write is an object") }
            writes.append(try ForwardedWrite.decode(.object(members + [JSONMember("a", auth)]), origin: .onDisconnect))
        }
        return StoredRegistrations(writes: writes)
    }
}
