import Crypto
import KindlingCore

/// What `kindling migrate` compares for one top-level key on each side: how many leaf values it
/// holds and a SHA-256 of its canonical JSON. Canonical so that two servers that write the same
/// data differently still agree: object members sorted by their keys' UTF-8 bytes, an array
/// read as the object of its non-null elements by index (a server may answer keys 0, 1, 2… either
/// way), nulls and empty objects dropped (they are no data), numbers as `JSONWriter` writes them.
struct MigrationDigest: Equatable {
    /// The leaf values (strings, numbers, booleans).
    var leaves: Int
    /// SHA-256 of the canonical JSON, in hex.
    var hash: String

    init(_ value: JSONValue) {
        var writer = JSONWriter()
        leaves = Self.write(value, into: &writer) ?? 0
        if writer.bytes.isEmpty { writer.writeRaw("null".utf8) }
        hash = SHA256.hash(data: writer.bytes).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    /// Writes `value` canonically; returns its leaf count, or nil (writing nothing) when it
    /// holds no data.
    private static func write(_ value: JSONValue, into writer: inout JSONWriter) -> Int? {
        let members: [(key: String, value: JSONValue)]
        switch value {
        case .null: return nil
        case .bool, .number, .string:
            writer.write(value)
            return 1
        case .array(let elements):
            members = elements.enumerated().map { (String($0.offset), $0.element) }
        case .object(let object):
            members = object.map { ($0.key, $0.value) }
        }
        var latest: [String: JSONValue] = [:]
        for member in members { latest[member.key] = member.value }
        var body = JSONWriter()
        var leaves = 0
        for key in latest.keys.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }) {
            guard let child = latest[key] else { continue }
            var childWriter = JSONWriter()
            guard let count = write(child, into: &childWriter) else { continue }
            body.writeRaw((leaves == 0 ? "" : ",").utf8)
            body.write(key)
            body.writeRaw(":".utf8)
            body.writeRaw(childWriter.bytes)
            leaves += count
        }
        guard leaves > 0 else { return nil }
        writer.writeRaw("{".utf8)
        writer.writeRaw(body.bytes)
        writer.writeRaw("}".utf8)
        return leaves
    }
}

extension String {
    /// The string with zeros before it up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
