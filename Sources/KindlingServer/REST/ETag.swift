import KindlingCore

/// The ETags of REST conditional requests.
///
/// The tag is the node's cached SDK hash (base64 of a SHA-1 over the node, priorities
/// included), so computing it after a write costs only the written path. A missing location has
/// the literal tag `null_etag`, which clients send as `if-match: null_etag` to mean "only if absent".
enum ETag {
    static let null = "null_etag"

    static func of(_ node: Node) -> String { node.isEmpty ? null : node.hash }

    /// A client's tag with optional surrounding quotes and a weak `W/` prefix removed.
    static func normalize(_ text: String) -> String {
        var tag = Substring(text)
        while let first = tag.first, first == " " || first == "\t" { tag = tag.dropFirst() }
        while let last = tag.last, last == " " || last == "\t" { tag = tag.dropLast() }
        if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
        if tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") { tag = tag.dropFirst().dropLast() }
        return String(tag)
    }
}
