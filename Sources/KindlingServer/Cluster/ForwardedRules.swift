import KindlingCore

/// A change of a namespace's own rules that a follower sends the leader on
/// `kindling.rpc.<namespace>`, like a `ForwardedWrite`: the rules' source and the admin's
/// identity the follower verified. The leader checks both again and publishes the rules on the
/// namespace's log, so every node puts them in force at the same point of the write order.
struct ForwardedRules: Sendable {
    var source: String
    var auth: AuthState

    /// The request's JSON: `{"o": "rules", "r": source, "a": auth}`.
    func encoded() -> [UInt8] {
        let json = JSONValue.object([
            JSONMember("o", .string("rules")), JSONMember("r", .string(source)), JSONMember("a", ForwardedWrite.encode(auth)),
        ])
        return Array(JSONWriter.string(json).utf8)
    }

    /// Whether a request on the rpc subject is a rules change rather than a write.
    static func isRules(_ json: JSONValue) -> Bool { json["o"]?.stringValue == "rules" }

    /// Reads a request; throws on anything a follower would not have sent.
    static func decode(_ json: JSONValue) throws(ValidationError) -> ForwardedRules {
        guard isRules(json), let source = json["r"]?.stringValue, let auth = json["a"] else {
            throw ValidationError(.invalidData, "a forwarded rules change needs o, r and a")
        }
        return ForwardedRules(source: source, auth: try ForwardedWrite.decodeAuth(auth))
    }
}
