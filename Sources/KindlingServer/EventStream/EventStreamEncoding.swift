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

    /// The events for one change, seen by a stream listening at `location`. Writes at or below
    /// the location become a `put` at the relative path; a merge whose keys are all direct
    /// children becomes one `patch`, and a deeper merge one `put` per entry (a `patch` names
    /// direct children only). Changes arrive only at or below the location (the fan-out turns
    /// a write above it into a put of the location itself); anything else yields nothing.
    static func events(for change: Delivery<ConnectionID>.Change, at location: Path) -> [UInt8] {
        var writer = JSONWriter()
        switch change {
        case .put(let path, let node):
            guard let relative = location.relative(path) else { return [] }
            event("put", path: relative, into: &writer) { node.write(to: &$0, format: .plain) }
        case .merge(let path, let entries):
            guard let relative = location.relative(path) else { return [] }
            if entries.allSatisfy({ $0.path.count == 1 }) {
                event("patch", path: relative, into: &writer) { writer in
                    writer.writeRaw("{".utf8)
                    for (offset, entry) in entries.enumerated() {
                        if offset > 0 { writer.writeRaw(",".utf8) }
                        writer.write(entry.path.relativeString)
                        writer.writeRaw(":".utf8)
                        entry.node.write(to: &writer, format: .plain)
                    }
                    writer.writeRaw("}".utf8)
                }
            } else {
                for entry in entries {
                    event("put", path: relative.appending(entry.path), into: &writer) { entry.node.write(to: &$0, format: .plain) }
                }
            }
        }
        return writer.bytes
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
