import KindlingCore

extension ClientMessage {
    /// Decodes one whole message (after frame reassembly).
    public static func decode(_ text: String) throws(ProtocolError) -> ClientMessage {
        var text = text
        let result: Result<ClientMessage, ProtocolError> = text.withUTF8 { bytes in
            Result { () throws(ProtocolError) in try decode(utf8: bytes) }
        }
        return try result.get()
    }

    /// Decodes one whole message from its UTF-8 bytes, where they lie (a server decodes most
    /// messages straight from the WebSocket frame). The JSON parser checks the UTF-8 of every
    /// string; bytes outside strings must be JSON's own ASCII.
    public static func decode(utf8 bytes: UnsafeBufferPointer<UInt8>) throws(ProtocolError) -> ClientMessage {
        if let request = CompactRequestEnvelope.decode(bytes) { return .request(request) }
        return try decodeParsingEnvelope(bytes)
    }

    /// The number of the request a data message carries, found without parsing the message: a
    /// server that will not parse a message (too large to parse now) still answers its request.
    public static func requestNumber(utf8 bytes: UnsafeRawBufferPointer) -> Int? {
        var scanner = RequestNumberScanner()
        scanner.scan(bytes)
        return scanner.requestNumber
    }

    /// The general decoder: the whole message parsed as JSON, then the envelope read from it.
    static func decodeParsingEnvelope(_ bytes: UnsafeBufferPointer<UInt8>) throws(ProtocolError) -> ClientMessage {
        let json: JSONValue
        do throws(ValidationError) {
            json = try JSONParser.parse(bytes)
        } catch {
            throw ProtocolError(.malformedMessage, "Message is not JSON: \(error.message)")
        }
        guard case .object = json, let layer = json["t"]?.stringValue, let payload = json["d"] else {
            throw ProtocolError(.malformedMessage, "Message is not an envelope with \"t\" and \"d\"")
        }
        switch layer {
        case "c":
            guard let type = payload["t"]?.stringValue else {
                throw ProtocolError(.malformedMessage, "Control message without a type")
            }
            return type == "p" ? .ping : .otherControl(type)
        case "d":
            return .request(try Request.decode(payload))
        default:
            throw ProtocolError(.malformedMessage, "Unknown message layer \(ValidationError.quoted(layer))")
        }
    }
}

extension Request {
    static func decode(_ payload: JSONValue) throws(ProtocolError) -> Request {
        guard case .object = payload else { throw ProtocolError(.malformedMessage, "Data message is not an object") }
        var number: Int?
        if let r = payload["r"] {
            guard let value = r.numberValue?.wireCounter else {
                throw ProtocolError(.malformedMessage, "Request number \"r\" is not an integer")
            }
            number = value
        }
        guard let name = payload["a"]?.stringValue else {
            throw ProtocolError(.malformedMessage, "Request without an action \"a\"", requestNumber: number)
        }
        let body = payload["b"] ?? .object([])
        do throws(ValidationError) {
            return Request(number: number, action: try Action.decode(name, body))
        } catch {
            throw ProtocolError(.invalidRequest, error.message, requestNumber: number, validation: error)
        }
    }
}

extension Action {
    static func decode(_ name: String, _ body: JSONValue) throws(ValidationError) -> Action {
        // Writes first: a string switch tries its cases in order, and puts and merges are most
        // of what clients send.
        switch name {
        case "p":
            let hash = body["h"]
            if let hash, hash.stringValue == nil, !hash.isNull { throw invalid("\"h\" must be a string") }
            return .put(path: try path(body), data: body["d"] ?? .null, hash: hash?.stringValue)
        case "m": return .merge(path: try path(body), data: try members(body))
        case "s": return .stats
        case "auth", "gauth":
            guard let credential = body["cred"]?.stringValue else { throw invalid("\(name) needs a \"cred\" string") }
            return .auth(
                AuthRequest(
                    isGoogleToken: name == "gauth",
                    credential: credential,
                    authOverride: body["authvar"],
                    noAuth: body["noauth"]?.boolValue ?? false
                ))
        case "unauth": return .unauth
        case "appcheck": return .appCheck(body["token"]?.stringValue ?? "")
        case "unappeck", "unappcheck": return .unappCheck
        case "q":
            return .listen(
                ListenRequest(
                    path: try path(body),
                    query: try query(body),
                    tag: try tag(body),
                    hash: body["h"]?.stringValue ?? "",
                    wireQuery: body["q"].flatMap { $0.isNull ? JSONValue?.none : $0 }
                ))
        case "n": return .unlisten(path: try path(body), query: try query(body))
        case "o": return .onDisconnectPut(path: try path(body), data: body["d"] ?? .null)
        case "om": return .onDisconnectMerge(path: try path(body), data: try members(body))
        case "oc": return .onDisconnectCancel(path: try path(body))
        case "g":
            if let text = body["p"]?.stringValue, isInfoPath(text) { return .getInfo(text) }
            return .get(path: try path(body), query: try query(body))
        case "echo": return .echo(body["d"] ?? .null)
        default: return .unknown(name)
        }
    }

    private static func invalid(_ reason: String) -> ValidationError { ValidationError(.invalidData, reason) }

    /// `/.info` and below: the SDKs' local pseudo-location.
    static func isInfoPath(_ text: String) -> Bool {
        let first = text.split(separator: "/", omittingEmptySubsequences: true).first
        return first == ".info"
    }

    private static func path(_ body: JSONValue) throws(ValidationError) -> Path {
        guard let text = body["p"]?.stringValue else { throw ValidationError(.invalidPath, "Request needs a path \"p\"") }
        return try Path(text)
    }

    private static func query(_ body: JSONValue) throws(ValidationError) -> Query {
        guard let object = body["q"], !object.isNull else { return .all }
        return try Query(wire: object)
    }

    private static func tag(_ body: JSONValue) throws(ValidationError) -> Int? {
        guard let value = body["t"], !value.isNull else { return nil }
        guard let number = value.numberValue?.wireCounter else { throw invalid("tag \"t\" must be an integer") }
        return number
    }

    private static func members(_ body: JSONValue) throws(ValidationError) -> [JSONMember] {
        guard case .object(let members)? = body["d"] else { throw invalid("merge data \"d\" must be an object") }
        return members
    }
}
