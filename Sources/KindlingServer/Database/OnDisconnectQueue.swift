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

        /// The size of its data as JSON text, the measure of the connection's limit.
        var bytes: Int {
            switch self {
            case .put(_, let data): return JSONWriter.string(data).utf8.count
            case .merge(_, let members): return JSONWriter.string(.object(members)).utf8.count
            }
        }
    }

    private(set) var operations: [Operation] = []
    private(set) var bytes = 0

    mutating func append(_ operation: Operation) {
        operations.append(operation)
        bytes += operation.bytes
    }

    /// Drops what is queued at `path` and below (the SDK documentation's meaning of cancel).
    mutating func cancel(at path: Path) {
        operations.removeAll { path.contains($0.path) }
        bytes = operations.reduce(0) { $0 + $1.bytes }
    }

    /// Hands over the operations, leaving the queue empty.
    mutating func drain() -> [Operation] {
        defer {
            operations = []
            bytes = 0
        }
        return operations
    }
}
