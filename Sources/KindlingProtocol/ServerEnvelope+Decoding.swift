import KindlingCore

extension ServerEnvelope {
    /// Decodes one whole server message (after frame reassembly).
    ///
    /// Everything a server sends is checked as a server checks what a client sends: a request
    /// number or tag must be a whole number below 2^53 (so a hostile `1e300` is an error, not a
    /// trap), a path must be a valid path. An action this client does not know decodes as
    /// `.unknown`, so a newer server does not break an older client.
    public static func decode(_ text: String) throws(ProtocolError) -> ServerEnvelope {
        let json: JSONValue
        do throws(ValidationError) {
            json = try JSONParser.parse(text)
        } catch {
            throw ProtocolError(.malformedMessage, "Message is not JSON: \(error.message)")
        }
        guard case .object = json, let layer = json["t"]?.stringValue, let payload = json["d"], case .object = payload else {
            throw ProtocolError(.malformedMessage, "Message is not an envelope with \"t\" and \"d\"")
        }
        switch layer {
        case "c":
            guard let type = payload["t"]?.stringValue else { throw ProtocolError(.malformedMessage, "Control message without a type") }
            let data = payload["d"] ?? .null
            switch type {
            case "h":
                return .handshake(
                    ServerHandshake(
                        timestamp: data["ts"]?.numberValue, version: data["v"]?.stringValue, host: data["h"]?.stringValue,
                        session: data["s"]?.stringValue))
            case "o": return .pong
            default: return .otherControl(type: type, data: data)
            }
        case "d":
            let body = payload["b"] ?? .null
            if let number = payload["r"] {
                guard let number = wholeNumber(number) else {
                    throw ProtocolError(.malformedMessage, "Response number \"r\" is not an integer below 2^53")
                }
                guard case .object = body, let status = body["s"]?.stringValue else {
                    throw ProtocolError(.malformedMessage, "Response \(number) without a status", requestNumber: number)
                }
                return .response(ServerResponse(number: number, status: status, data: body["d"] ?? .null))
            }
            guard let action = payload["a"]?.stringValue else { throw ProtocolError(.malformedMessage, "Data message without \"r\" or \"a\"") }
            return .push(try ServerPush.decode(action, body))
        default:
            throw ProtocolError(.malformedMessage, "Unknown message layer \(ValidationError.quoted(layer))")
        }
    }

    /// A whole number below 2^53 (see `Double.exactJSONInteger`), as an `Int`; nil for anything else.
    static func wholeNumber(_ value: JSONValue) -> Int? {
        guard let number = value.numberValue?.exactJSONInteger else { return nil }
        return Int(number)
    }
}

extension ServerPush {
    static func decode(_ action: String, _ body: JSONValue) throws(ProtocolError) -> ServerPush {
        switch action {
        case "d", "m":
            let path = try path(body)
            var tag: Int?
            if let value = body["t"], !value.isNull {
                guard let number = ServerEnvelope.wholeNumber(value) else {
                    throw ProtocolError(.malformedMessage, "Push tag \"t\" is not an integer below 2^53")
                }
                tag = number
            }
            let data = body["d"] ?? .null
            if action == "d" { return .overwrite(path: path, data: data, tag: tag) }
            guard case .object(let members) = data else { throw ProtocolError(.malformedMessage, "Merge data is not an object") }
            return .merge(path: path, data: members, tag: tag)
        case "c":
            let query = body["q"].flatMap { $0.isNull ? JSONValue?.none : $0 }
            return .listenRevoked(path: try path(body), query: query)
        case "ac":
            return .authRevoked(status: body["s"]?.stringValue ?? "", reason: body["d"]?.stringValue ?? "")
        default:
            return .unknown(action)
        }
    }

    private static func path(_ body: JSONValue) throws(ProtocolError) -> Path {
        guard let text = body["p"]?.stringValue else { throw ProtocolError(.malformedMessage, "Push without a path \"p\"") }
        do throws(ValidationError) {
            return try Path(text)
        } catch {
            throw ProtocolError(.invalidRequest, "Push path: \(error.message)", validation: error)
        }
    }
}
