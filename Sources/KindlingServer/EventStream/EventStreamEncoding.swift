import KindlingCore

/// Server-sent events as the Firebase REST streaming clients read them.
///
/// Each event is `event: <name>\ndata: <one line>\n\n` with `\n` line endings only: the Python
/// clients split lines on `\n`, so a `\r` would become part of the event name. There is never a
/// comment-only block (`: ping`): firebase-admin turns it into an event with empty data, fails to
/// parse it, and its listener thread dies. JSON is written compactly, so it never holds a newline.
enum EventStreamEncoding {
    /// `event: keep-alive\ndata: null\n\n`: clients drop it, and firebase-admin's `close()` returns
    /// only once more bytes arrive, so these also bound how long closing a listener takes.
    static let keepAlive: [UInt8] = Array("event: keep-alive\ndata: null\n\n".utf8)

    /// Ends a stream for a server-side reason. The data is null rather than a message: firebase-admin
    /// hands cancel events to user callbacks, which can only read an object or null.
    static let cancel: [UInt8] = Array("event: cancel\ndata: null\n\n".utf8)

    /// Tells the client its credential expired. The data is deliberately unquoted: both Python
    /// clients compare it with this exact text and reconnect with a fresh token.
    static let authRevoked: [UInt8] = Array("event: auth_revoked\ndata: credential is no longer valid\n\n".utf8)

    /// The events for one change, seen by a stream listening at `location`. A write at or below
    /// the location becomes a `put` at the relative path. A merge becomes one `patch` at the
    /// deepest path its entries share, its keys the entries' paths relative to it (`/` inside a
    /// key, as in the WebSocket `m` message): never one event per entry, which would show a
    /// stream mirror half of an atomic update. A merge of a single entry below its path is a
    /// `put` of that entry, the same change. Changes arrive only at or below the location (the
    /// fan-out turns a write above it into a put of the location itself, or a merge at the
    /// location of the entries inside it); anything else yields nothing.
    /// The data is written in `format`: `.export` (`format=export`) keeps priorities.
    static func events(for change: Delivery<ConnectionID>.Change, at location: Path, format: JSONFormat) -> [UInt8] {
        var writer = JSONWriter()
        switch change {
        case .put(let path, let node):
            guard let relative = location.relative(path) else { return [] }
            event("put", path: relative, into: &writer) { node.write(to: &$0, format: format) }
        case .merge(let path, let entries):
            guard let relative = location.relative(path) else { return [] }
            if entries.count == 1, entries[0].path.count > 1 {
                event("put", path: relative.appending(entries[0].path), into: &writer) { entries[0].node.write(to: &$0, format: format) }
                break
            }
            let shared = sharedParent(of: entries)
            let below = shared.isRoot ? entries : entries.map { MergeEntry(path: $0.path.dropFirst(shared.count), node: $0.node) }
            event("patch", path: relative.appending(shared), into: &writer) { $0.write(below, format: format) }
        }
        return writer.bytes
    }

    /// The longest path that starts every entry's path and is shorter than each of them, so
    /// every entry keeps at least one key below it (for `a/b/c` and `a/b/d`, `a/b`).
    static func sharedParent(of entries: [MergeEntry]) -> Path {
        guard var shared = entries.first?.path.parent else { return .root }
        for entry in entries.dropFirst() {
            let keys = entry.path.keys.dropLast()
            let common = zip(shared.keys, keys).prefix { $0 == $1 }.count
            if common < shared.count { shared = Path(keys: Array(shared.keys.prefix(common))) }
        }
        return shared
    }

    /// Appends `event: <name>\ndata: {"path":…,"data":…}\n\n`.
    private static func event(_ name: String, path: Path, into writer: inout JSONWriter, data: (inout JSONWriter) -> Void) {
        writer.writeRaw("event: \(name)\ndata: {\"path\":".utf8)
        writer.write(path.description)
        writer.writeRaw(",\"data\":".utf8)
        data(&writer)
        writer.writeRaw("}\n\n".utf8)
    }
}
