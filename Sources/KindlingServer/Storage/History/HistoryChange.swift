import KindlingCore

/// One committed write that touched a path, as the history lists it (`GET /<path>.json?changes=true`).
public struct HistoryChange: Sendable, Equatable {
    /// What the write did.
    public enum Kind: String, Sendable {
        /// Replaced the data at its path.
        case set
        /// Removed the data at its path (a set of null).
        case remove
        /// Replaced several locations below its path at once.
        case update
    }

    /// When it was committed, in milliseconds since 1970.
    public var time: Int64
    public var sequence: UInt64
    public var kind: Kind
    /// Where it wrote.
    public var path: Path
    /// The size of the write as logged.
    public var bytes: Int
    /// Who made it, when the server recorded writers (`{"uid":…}`, `{"admin":true}`, null).
    public var writer: JSONValue?

    init(_ record: LogRecord) {
        time = record.time
        sequence = record.sequence
        path = record.write.path
        switch record.write {
        case .set(_, let node): kind = node.isEmpty ? .remove : .set
        case .merge: kind = .update
        }
        bytes = record.encoded().count
        writer = record.writer.flatMap { try? JSONParser.parse($0) }
    }

    /// True when `record` wrote at, above or below `path`.
    static func touches(_ record: LogRecord, _ path: Path) -> Bool {
        switch record.write {
        case .set(let at, _):
            return at.contains(path) || path.contains(at)
        case .merge(let at, let entries):
            return entries.contains { entry in
                let written = at.appending(entry.path)
                return written.contains(path) || path.contains(written)
            }
        }
    }

    /// As JSON: `{"time":…,"sequence":…,"kind":"set","path":"/…","bytes":…}`.
    public var jsonValue: JSONValue {
        .object(
            [
                JSONMember("time", .number(Double(time))), JSONMember("sequence", .number(Double(sequence))),
                JSONMember("kind", .string(kind.rawValue)), JSONMember("path", .string(path.description)),
                JSONMember("bytes", .number(Double(bytes))),
            ] + (writer.map { [JSONMember("writer", $0)] } ?? []))
    }
}
