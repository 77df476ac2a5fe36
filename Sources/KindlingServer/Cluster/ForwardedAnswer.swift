import KindlingCore

/// The leader's reply to a `ForwardedWrite`. A committed write names the log sequence of its
/// record: the follower answers its client once it has committed that record from the stream,
/// so the client's own listeners have the event first, as on one server.
enum ForwardedAnswer: Sendable {
    /// Committed as the record `sequence` (0 when it changed nothing); `pushed` is a push's new
    /// child.
    case committed(sequence: UInt64, pushed: Key?)
    case refused(Refusal)

    func encoded() -> [UInt8] {
        let json: JSONValue
        switch self {
        case .committed(let sequence, let pushed):
            var members = [JSONMember("s", .string(String(sequence)))]
            if let pushed { members.append(JSONMember("k", .string(pushed.string))) }
            json = .object(members)
        case .refused(let refusal):
            json = .object(Self.encode(refusal))
        }
        return Array(JSONWriter.string(json).utf8)
    }

    static func decode(_ bytes: [UInt8]) throws(ValidationError) -> ForwardedAnswer {
        let json = try JSONParser.parse(bytes)
        if let text = json["s"]?.stringValue {
            guard let sequence = UInt64(text) else { throw ValidationError(.invalidData, "a forwarded answer's sequence is not a number") }
            return .committed(sequence: sequence, pushed: try json["k"]?.stringValue.map { text throws(ValidationError) in try Key(text) })
        }
        return .refused(try decodeRefusal(json))
    }

    private static func encode(_ refusal: Refusal) -> [JSONMember] {
        switch refusal {
        case .permissionDenied: return [JSONMember("r", .string("permission_denied"))]
        case .dataStale: return [JSONMember("r", .string("datastale"))]
        case .expiredToken: return [JSONMember("r", .string("expired_token"))]
        case .invalid(let error):
            return [JSONMember("r", .string("invalid")), JSONMember("v", .string(error.kind.rawValue)), JSONMember("m", .string(error.message))]
        case .preconditionFailed(let current):
            var members = [JSONMember("r", .string("precondition_failed"))]
            if let current { members.append(JSONMember("n", .string(current.jsonText(format: .export)))) }
            return members
        case .unavailable(let message): return [JSONMember("r", .string("unavailable")), JSONMember("m", .string(message))]
        case .unconfirmed: return [JSONMember("r", .string("unconfirmed"))]
        case .namespaceLimit(let message): return [JSONMember("r", .string("namespace_limit")), JSONMember("m", .string(message))]
        case .invalidRules(let message): return [JSONMember("r", .string("invalid_rules")), JSONMember("m", .string(message))]
        case .limitExceeded(let message): return [JSONMember("r", .string("limit_exceeded")), JSONMember("m", .string(message))]
        case .invalidToken(let message): return [JSONMember("r", .string("invalid_token")), JSONMember("m", .string(message))]
        }
    }

    private static func decodeRefusal(_ json: JSONValue) throws(ValidationError) -> Refusal {
        let message = json["m"]?.stringValue ?? ""
        switch json["r"]?.stringValue {
        case "permission_denied": return .permissionDenied
        case "datastale": return .dataStale
        case "expired_token": return .expiredToken
        case "invalid":
            let kind = json["v"]?.stringValue.flatMap(ValidationError.Kind.init(rawValue:)) ?? .invalidData
            return .invalid(ValidationError(kind, message))
        case "precondition_failed":
            return .preconditionFailed(current: try json["n"]?.stringValue.map { text throws(ValidationError) in try Node(jsonText: text) })
        case "unavailable": return .unavailable(message)
        case "unconfirmed": return .unconfirmed
        case "namespace_limit": return .namespaceLimit(message)
        case "invalid_rules": return .invalidRules(message)
        case "limit_exceeded": return .limitExceeded(message)
        case "invalid_token": return .invalidToken(message)
        default: throw ValidationError(.invalidData, "a forwarded answer is neither committed nor refused")
        }
    }
}
