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

        /// The locations it writes (a put's path, or each of a merge's members' paths), for
        /// finding the queued writes a later one overwrites; nil for a merge of more than
        /// `Locations.most` members, which neither replaces nor is replaced, so each
        /// registration compares a bounded number of paths however much is queued.
        var locations: Locations? {
            switch self {
            case .put(let path, _): return Locations(paths: [path])
            case .merge(let path, let members):
                guard members.count <= Locations.most else { return nil }
                return Locations(paths: members.compactMap { member in (try? Path(member.key)).map(path.appending) })
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

    /// Where an operation writes (see `Operation.locations`).
    struct Locations: Sendable {
        /// The most members of a merge whose locations are compared.
        static let most = 8
        let paths: [Path]

        /// True when writing at `self` leaves nothing of a write at `other`: each of `other`'s
        /// paths is at or below one of these (a write of nothing is covered by any).
        func covers(_ other: Locations) -> Bool {
            other.paths.allSatisfy { path in paths.contains { $0.contains(path) } }
        }
    }

    /// The operations in order, each with its size and locations (found once, when queued).
    private var entries: [(operation: Operation, bytes: Int, locations: Locations?)] = []
    private(set) var bytes = 0

    var count: Int { entries.count }

    /// The operations in order, left queued.
    var operations: [Operation] { entries.map(\.operation) }

    mutating func append(_ operation: Operation, bytes size: Int, locations: Locations?) {
        entries.append((operation, size, locations))
        bytes += size
    }

    /// Drops the queued writes a later one at `locations` overwrites when they run in order.
    /// Running them would change nothing the later one leaves, and presence code arms the same
    /// onDisconnect write again at every change of status, which must not use up the
    /// connection's limit.
    mutating func dropOverwritten(by locations: Locations?) {
        guard let locations else { return }
        entries.removeAll { entry in
            guard let queued = entry.locations, locations.covers(queued) else { return false }
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
