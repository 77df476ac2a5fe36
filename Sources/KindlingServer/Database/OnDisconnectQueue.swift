import KindlingCore

/// The writes a connection asked to have made when it goes away (`o`, `om`), in order, less what
/// it cancelled (`oc`), and the bytes they hold (for the connection's limit).
///
/// The data is kept as the client sent it: server values resolve when the writes run.
struct OnDisconnectQueue: Sendable {
    enum Operation: Sendable {
        case put(Path, JSONValue)
        case merge(Path, [JSONMember])

        var path: Path {
            switch self {
            case .put(let path, _), .merge(let path, _): return path
            }
        }

        /// The locations it writes: a put's path, or each of a merge's members' paths.
        var locations: [Path] {
            switch self {
            case .put(let path, _): [path]
            case .merge(let path, let members): members.compactMap { member in (try? Path(member.key)).map(path.appending) }
            }
        }

        /// The size of its data as JSON text, the measure of the connection's limit.
        var bytes: Int {
            switch self {
            case .put(_, let data): return JSONWriter.string(data).utf8.count
            case .merge(_, let members): return JSONWriter.string(.object(members)).utf8.count
            }
        }
    }

    /// The operations in order, each with its size (measured once, when queued).
    private var entries: [(operation: Operation, bytes: Int)] = []
    private(set) var bytes = 0

    var count: Int { entries.count }

    /// The operations in order, left queued.
    var operations: [Operation] { entries.map(\.operation) }

    mutating func append(_ operation: Operation, bytes size: Int) {
        entries.append((operation, size))
        bytes += size
    }

    /// Drops the queued writes `operation` overwrites when they run in order: those whose every
    /// location (a put's path, a merge's member paths) is at or below one `operation` writes.
    /// Running them would change nothing the later one leaves, and presence code arms the same
    /// onDisconnect write again at every change of status, which must not use up the
    /// connection's limit.
    mutating func dropOverwritten(by operation: Operation) {
        let overwritten = operation.locations
        entries.removeAll { entry in
            let covered = entry.operation.locations.allSatisfy { location in overwritten.contains { $0.contains(location) } }
            guard covered else { return false }
            bytes -= entry.bytes
            return true
        }
    }

    /// Drops what is queued at `path` and below (the SDK documentation's meaning of cancel).
    mutating func cancel(at path: Path) {
        entries.removeAll { entry in
            guard path.contains(entry.operation.path) else { return false }
            bytes -= entry.bytes
            return true
        }
    }

    /// Hands over the operations, leaving the queue empty.
    mutating func drain() -> [Operation] {
        defer {
            entries = []
            bytes = 0
        }
        return entries.map(\.operation)
    }
}
