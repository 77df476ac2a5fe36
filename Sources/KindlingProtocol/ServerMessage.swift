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
        if status == .ok, data == nil {
            return [UInt8](unsafeUninitializedCapacity: okResponseMaxCount) { buffer, count in
                count = writeOKResponse(number, into: UnsafeMutableRawBufferPointer(buffer))
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(48 + (data?.count ?? 2))
        bytes.append(contentsOf: WireLiterals.numberedDataPrefix)
        WireLiterals.appendDecimal(number, to: &bytes)
        bytes.append(contentsOf: WireLiterals.responseStatusKey)
        bytes.append(contentsOf: status.rawValue.utf8)
        bytes.append(contentsOf: #"","d":"#.utf8)
        if let data { bytes.append(contentsOf: data) } else { bytes.append(contentsOf: "{}".utf8) }
        bytes.append(contentsOf: "}}}".utf8)
        return bytes
    }

    /// The most bytes `writeOKResponse` writes (a number spells in at most 21 characters).
    public static let okResponseMaxCount = okResponsePrefix.utf8CodeUnitCount + 21 + okResponseTail.utf8CodeUnitCount

    /// Writes the `ok` response to request `number` without data, `{"t":"d","d":{"r":N,"b":{"s":
    /// "ok","d":{}}}}` (what `response(number, status: .ok)` returns), into `buffer`, which has
    /// room for `okResponseMaxCount` bytes; returns how many it wrote. Nearly every message a
    /// writer gets is this: a server writes it straight into the frames it sends, through one
    /// pointer, from static text (no array's reference counted from whichever core writes).
    public static func writeOKResponse(_ number: Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var end = copy(okResponsePrefix, into: buffer, at: 0)
        end += WireLiterals.withDecimal(number) { copy($0, into: buffer, at: end) }
        end += copy(okResponseTail, into: buffer, at: end)
        return end
    }

    /// `WireLiterals.numberedDataPrefix`, as static text (`WireCodecTests` checks they agree).
    private static let okResponsePrefix: StaticString = #"{"t":"d","d":{"r":"#
    private static let okResponseTail: StaticString = #","b":{"s":"ok","d":{}}}}"#

    private static func copy(_ text: StaticString, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        copy(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount), into: buffer, at: offset)
    }

    private static func copy(_ bytes: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<(offset + bytes.count)]).copyMemory(from: bytes)
        return bytes.count
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
