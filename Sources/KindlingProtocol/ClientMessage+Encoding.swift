import KindlingCore

extension ClientMessage {
    /// The message as the text a client sends: `{"t":"d","d":{"r":N,"a":ACTION,"b":BODY}}` for a
    /// request, `{"t":"c","d":{"t":TYPE,"d":{}}}` for a control message. The inverse of
    /// `decode(_:)`, so the SDK and the test client never spell an envelope by hand.
    public var encoded: String {
        var writer = JSONWriter()
        switch self {
        case .ping:
            writer.writeRaw(#"{"t":"c","d":{"t":"p","d":{}}}"#.utf8)
        case .otherControl(let type):
            writer.writeRaw(#"{"t":"c","d":{"t":"#.utf8)
            writer.write(type)
            writer.writeRaw(#","d":{}}}"#.utf8)
        case .request(let request):
            return Self.request(number: request.number, action: request.action.wireName, body: request.action.wireBody)
        }
        return writer.text
    }

    /// A request envelope for any action name and body, valid or not: what `encoded` writes for
    /// a typed request, and what a test client sends when it probes the server with a bad one.
    public static func request(number: Int?, action: String, body: JSONValue) -> String {
        var writer = JSONWriter()
        writer.writeRaw(#"{"t":"d","d":{"#.utf8)
        if let number {
            writer.writeRaw(#""r":"#.utf8)
            writer.writeRaw(String(number).utf8)
            writer.writeRaw(",".utf8)
        }
        writer.writeRaw(#""a":"#.utf8)
        writer.write(action)
        writer.writeRaw(#","b":"#.utf8)
        writer.write(body)
        writer.writeRaw("}}".utf8)
        return writer.text
    }
}

extension Action {
    /// The action's name on the wire (`q`, `p`, `auth`, …).
    public var wireName: String {
        switch self {
        case .stats: return "s"
        case .auth(let auth): return auth.isGoogleToken ? "gauth" : "auth"
        case .unauth: return "unauth"
        case .appCheck: return "appcheck"
        case .unappCheck: return "unappeck"
        case .listen: return "q"
        case .unlisten: return "n"
        case .put: return "p"
        case .merge: return "m"
        case .onDisconnectPut: return "o"
        case .onDisconnectMerge: return "om"
        case .onDisconnectCancel: return "oc"
        case .get, .getInfo: return "g"
        case .echo: return "echo"
        case .unknown(let name): return name
        }
    }

    /// The request body `b`, members in the order the official SDKs write them.
    public var wireBody: JSONValue {
        switch self {
        case .stats, .unauth, .unappCheck, .unknown:
            return .object([])
        case .auth(let auth):
            var members = [JSONMember("cred", .string(auth.credential))]
            if let authOverride = auth.authOverride { members.append(JSONMember("authvar", authOverride)) }
            if auth.noAuth { members.append(JSONMember("noauth", .bool(true))) }
            return .object(members)
        case .appCheck(let token):
            return .object([JSONMember("token", .string(token))])
        case .listen(let listen):
            var members = [Self.path(listen.path)]
            if let query = listen.wireQuery { members.append(JSONMember("q", query)) }
            if let tag = listen.tag { members.append(JSONMember("t", .number(Double(tag)))) }
            members.append(JSONMember("h", .string(listen.hash)))
            return .object(members)
        case .unlisten(let path, let query), .get(let path, let query):
            var members = [Self.path(path)]
            if !query.isDefault { members.append(JSONMember("q", query.wireObject)) }
            return .object(members)
        case .put(let path, let data, let hash):
            var members = [Self.path(path), JSONMember("d", data)]
            if let hash { members.append(JSONMember("h", .string(hash))) }
            return .object(members)
        case .merge(let path, let data), .onDisconnectMerge(let path, let data):
            return .object([Self.path(path), JSONMember("d", .object(data))])
        case .onDisconnectPut(let path, let data):
            return .object([Self.path(path), JSONMember("d", data)])
        case .onDisconnectCancel(let path):
            return .object([Self.path(path)])
        case .getInfo(let text):
            return .object([JSONMember("p", .string(text))])
        case .echo(let data):
            return .object([JSONMember("d", data)])
        }
    }

    private static func path(_ path: Path) -> JSONMember { JSONMember("p", .string(path.description)) }
}
