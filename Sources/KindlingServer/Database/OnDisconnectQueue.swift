import KindlingCore

/// The writes a connection asked to have made when it goes away (`o`, `om`), in order, less what
/// it cancelled (`oc`).
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
    }

    private(set) var operations: [Operation] = []

    mutating func append(_ operation: Operation) { operations.append(operation) }

    /// Drops what is queued at `path` and below (the SDK documentation's meaning of cancel).
    mutating func cancel(at path: Path) {
        operations.removeAll { path.contains($0.path) }
    }

    /// Hands over the operations, leaving the queue empty.
    mutating func drain() -> [Operation] {
        defer { operations = [] }
        return operations
    }
}
