import KindlingCore

/// Builds the JSON text of everything the server sends, as UTF-8 bytes.
///
/// Data payloads are written once per change (in export form, so priorities travel) and spliced
/// into each envelope, so a change with many recipients is serialised once.
public enum ServerMessage {
    /// The handshake the server sends first: `{"t":"c","d":{"t":"h","d":{…}}}`. `v` is the
    /// string `"5"`; `h` is the host:port the client can reconnect to.
    public static func handshake(timestamp: Int64, host: String, session: String) -> [UInt8] {
        var writer = JSONWriter()
        writer.writeRaw(#"{"t":"c","d":{"t":"h","d":{"ts":"#.utf8)
        writer.writeRaw(String(timestamp).utf8)
        writer.writeRaw(#","v":"5","h":"#.utf8)
        writer.write(host)
        writer.writeRaw(#","s":"#.utf8)
        writer.write(session)
        writer.writeRaw("}}}".utf8)
        return writer.bytes
    }

    /// The pong that answers a ping.
    public static let pong = Array(#"{"t":"c","d":{"t":"o","d":{}}}"#.utf8)

    /// A response to request `number`: `{"t":"d","d":{"r":N,"b":{"s":STATUS,"d":DATA}}}`, with
    /// `data` already encoded (`{}` when absent).
    public static func response(_ number: Int, status: WireStatus, data: [UInt8]? = nil) -> [UInt8] {
        // Every write's acknowledgement: written into one buffer sized once, the number's
        // digits without a `String`, the status (a fixed identifier) without escaping.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(48 + (data?.count ?? 2))
        bytes.append(contentsOf: WireLiterals.numberedDataPrefix)
        WireLiterals.appendDecimal(number, to: &bytes)
        if status == .ok, data == nil {
            bytes.append(contentsOf: WireLiterals.okResponseTail)
            return bytes
        }
        bytes.append(contentsOf: WireLiterals.responseStatusKey)
        bytes.append(contentsOf: status.rawValue.utf8)
        bytes.append(contentsOf: #"","d":"#.utf8)
        if let data { bytes.append(contentsOf: data) } else { bytes.append(contentsOf: "{}".utf8) }
        bytes.append(contentsOf: "}}}".utf8)
        return bytes
    }

    /// An error response whose data is the explanation text.
    public static func failure(_ number: Int, status: WireStatus, message: String) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(message)
        return response(number, status: status, data: writer.bytes)
    }

    /// A node as push data (export form: priorities included, never arrays).
    public static func data(_ node: Node) -> [UInt8] {
        var writer = JSONWriter()
        node.write(to: &writer, format: .export)
        return writer.bytes
    }

    /// The data of a merge push: `{"rel/path": value, …}`.
    public static func mergeData(_ entries: [MergeEntry]) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(entries, format: .export)
        return writer.bytes
    }

    /// A data push: `{"t":"d","d":{"a":"d"|"m","b":{"p":PATH,"d":DATA[,"t":TAG]}}}`.
    public static func push(merge: Bool, path: Path, data: [UInt8], tag: Int?) -> [UInt8] {
        var writer = JSONWriter()
        writer.writeRaw((merge ? #"{"t":"d","d":{"a":"m","b":{"p":"# : #"{"t":"d","d":{"a":"d","b":{"p":"#).utf8)
        writer.write(relativePath: path)
        writer.writeRaw(#","d":"#.utf8)
        writer.writeRaw(data)
        if let tag {
            writer.writeRaw(#","t":"#.utf8)
            writer.writeRaw(String(tag).utf8)
        }
        writer.writeRaw("}}}".utf8)
        return writer.bytes
    }

    /// A listen the server cancelled (the client lost read access): `{"t":"d","d":{"a":"c","b":
    /// {"p":PATH[,"q":[QUERY]]}}}`. The query object goes back exactly as the client sent it, in
    /// a one-element array: the JS SDK finds the listen by it (and fails on a bare object).
    public static func listenRevoked(path: Path, query: JSONValue?) -> [UInt8] {
        var writer = JSONWriter()
        writer.writeRaw(#"{"t":"d","d":{"a":"c","b":{"p":"#.utf8)
        writer.write(relativePath: path)
        if let query, !query.isNull {
            writer.writeRaw(#","q":["#.utf8)
            writer.write(query)
            writer.writeRaw("]".utf8)
        }
        writer.writeRaw("}}}".utf8)
        return writer.bytes
    }

    /// The connection's credential is no longer valid: `{"t":"d","d":{"a":"ac","b":{"s":STATUS,
    /// "d":REASON}}}`. The SDKs drop the token and reconnect with a fresh one.
    public static func authRevoked(status: String, reason: String) -> [UInt8] {
        var writer = JSONWriter()
        writer.writeRaw(#"{"t":"d","d":{"a":"ac","b":{"s":"#.utf8)
        writer.write(status)
        writer.writeRaw(#","d":"#.utf8)
        writer.write(reason)
        writer.writeRaw("}}}".utf8)
        return writer.bytes
    }
}
