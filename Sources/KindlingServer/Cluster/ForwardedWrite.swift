import KindlingCore

/// A write a follower sends its namespace's leader on `kindling.rpc.<namespace>`: the
/// operation as the client gave it (set, update or push, a precondition included), the
/// identity the follower verified, and how the write came to the follower. The leader decides
/// it with `NamespaceState.apply`, with the same rules and data as a write of its own clients,
/// and counts it under its client's action. Nodes trust each other's identities (through their
/// NATS credentials), as the plan in docs/cluster.md says.
struct ForwardedWrite: Sendable {
    var operation: Operation
    var auth: AuthState
    var origin: Origin
    /// Random (22 letters and digits, `NATSClient.randomToken`), given by the follower when it
    /// first forwards the write and kept when it sends it again, so the node that leads applies
    /// the write once however often it comes (`RecentWriteIDs`); the leader keeps it in the
    /// write's record (`LogRecord.writeID`). Nil from a node of an earlier version.
    var id: String?

    /// How a write came to the follower that forwards it: the leader counts it under that
    /// source's action (`RequestAction`).
    enum Origin: String, Sendable {
        case realtime, rest
        /// A queued onDisconnect write, run because its connection closed (or, kept in NATS or
        /// on disk, because its node or process died).
        case onDisconnect = "ondisconnect"
    }

    /// Nil for an operation that is not forwarded (anything but set, update, push).
    init?(_ operation: Operation, auth: AuthState, origin: Origin) {
        switch operation {
        case .set, .update, .push: break
        default: return nil
        }
        self.operation = operation
        self.auth = auth
        self.origin = origin
    }

    /// The name a push got, from its remembered record (`RecentWriteIDs`); nil for a set or an
    /// update.
    func pushedName(_ entry: RecentWriteIDs.Entry) -> Key? {
        if case .push = operation { return entry.key }
        return nil
    }

    /// Who asks, as the node that decides the write sees it.
    var caller: Caller { .forwarded(origin, auth) }

    /// The request's JSON: `{"o": "set"|"update"|"push", "p": [keys], "d": data,
    /// "c": {"hash"|"etag": text}, "a": auth, "s": "realtime"|"rest"|"ondisconnect", "i": id}`.
    func encoded() -> [UInt8] {
        var members = operationMembers()
        members.append(JSONMember("a", Self.encode(auth)))
        members.append(JSONMember("s", .string(origin.rawValue)))
        if let id { members.append(JSONMember("i", .string(id))) }
        return Array(JSONWriter.string(.object(members)).utf8)
    }

    /// The request's members but the identity.
    func operationMembers() -> [JSONMember] {
        var members: [JSONMember] = []
        switch operation {
        case .set(let path, let data, let precondition):
            members = [JSONMember("o", .string("set")), JSONMember("p", Self.encode(path)), JSONMember("d", data)]
            switch precondition {
            case .hash(let hash)?: members.append(JSONMember("c", .object([JSONMember("hash", .string(hash))])))
            case .etag(let etag)?: members.append(JSONMember("c", .object([JSONMember("etag", .string(etag))])))
            case nil: break
            }
        case .update(let path, let entries):
            members = [JSONMember("o", .string("update")), JSONMember("p", Self.encode(path)), JSONMember("d", .object(entries))]
        case .push(let path, let data):
            members = [JSONMember("o", .string("push")), JSONMember("p", Self.encode(path)), JSONMember("d", data)]
        default:
            break
        }
        return members
    }

    /// Reads a request; throws on anything a follower would not have sent.
    static func decode(_ bytes: [UInt8]) throws(ValidationError) -> ForwardedWrite {
        try decode(try JSONParser.parse(bytes))
    }

    /// Reads a request already parsed; `origin` is for one that names none (a node of an
    /// earlier version forwarded it, or it was kept without one, as registrations are).
    static func decode(_ json: JSONValue, origin: Origin = .rest) throws(ValidationError) -> ForwardedWrite {
        guard let kind = json["o"]?.stringValue, let data = json["d"], let keys = json["p"], let authJSON = json["a"] else {
            throw ValidationError(.invalidData, "a forwarded write needs o, p, d and a")
        }
        let path = try decodePath(keys)
        let auth = try decodeAuth(authJSON)
        let operation: Operation
        switch kind {
        case "set":
            var precondition: Precondition?
            if let hash = json["c"]?["hash"]?.stringValue { precondition = .hash(hash) }
            if let etag = json["c"]?["etag"]?.stringValue { precondition = .etag(etag) }
            operation = .set(path: path, data: data, precondition: precondition)
        case "update":
            guard case .object(let members) = data else { throw ValidationError(.invalidData, "a forwarded update needs an object") }
            operation = .update(path: path, members: members)
        case "push":
            operation = .push(path: path, data: data)
        default:
            throw ValidationError(.invalidData, "unknown forwarded operation \(ValidationError.quoted(kind))")
        }
        let named = json["s"]?.stringValue.flatMap(Origin.init(rawValue:))
        var id: String?
        if let text = json["i"]?.stringValue {
            // Kept in the log and in memory on every node: an id is what `randomToken` makes.
            guard (1...64).contains(text.utf8.count) else { throw ValidationError(.invalidData, "a forwarded write's id is 1 to 64 bytes") }
            id = text
        }
        return ForwardedWrite(operation: operation, auth: auth, origin: named ?? origin, id: id)
    }

    private init(operation: Operation, auth: AuthState, origin: Origin, id: String?) {
        self.operation = operation
        self.auth = auth
        self.origin = origin
        self.id = id
    }

    static func encode(_ path: Path) -> JSONValue { .array(path.keys.map { .string($0.string) }) }

    static func decodePath(_ json: JSONValue) throws(ValidationError) -> Path {
        guard case .array(let items) = json else { throw ValidationError(.invalidPath, "a forwarded path is an array of keys") }
        var keys: [Key] = []
        for item in items {
            guard let text = item.stringValue else { throw ValidationError(.invalidPath, "a forwarded key is a string") }
            keys.append(try Key(text))
        }
        return Path(keys: keys)
    }

    static func encode(_ auth: AuthState) -> JSONValue {
        switch auth {
        case .anonymous: return .object([JSONMember("k", .string("anonymous"))])
        case .admin: return .object([JSONMember("k", .string("admin"))])
        case .user(let user):
            return .object([
                JSONMember("k", .string("user")), JSONMember("v", user.ruleValue),
                JSONMember("e", user.expiresAt.map { .number(Double($0)) } ?? .null), JSONMember("x", user.expiry),
            ])
        }
    }

    static func decodeAuth(_ json: JSONValue) throws(ValidationError) -> AuthState {
        switch json["k"]?.stringValue {
        case "anonymous": return .anonymous
        case "admin": return .admin
        case "user":
            let expiresAt: Int64?
            if let number = json["e"]?.numberValue {
                guard number.isFinite, abs(number) < 9.0e15 else { throw ValidationError(.invalidNumber, "a forwarded expiry is out of range") }
                expiresAt = Int64(number)
            } else {
                expiresAt = nil
            }
            return .user(AuthenticatedUser(ruleValue: json["v"] ?? .null, expiresAt: expiresAt, expiry: json["x"] ?? .null))
        default:
            throw ValidationError(.invalidData, "a forwarded write names no identity")
        }
    }
}
