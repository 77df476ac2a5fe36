import KindlingCore

/// What reading a namespace's past needs, taken on its executor and used off it (the reading
/// takes long and touches only files and immutable values).
enum HistoryAccess: Sendable {
    /// The namespace's files, the time of its last committed write (0 when not known) and its
    /// tree now: an instant at or after that write is answered from the tree.
    case files(NamespaceHistory, NamespaceStorage, lastCommitTime: Int64, root: Node)
    /// A namespace never written: its past is empty.
    case empty
    /// The namespace keeps no history here, and why.
    case none(String)

    /// The data at `path` as it was at `time`.
    func node(at path: Path, time: Int64) throws(HistoryError) -> Node {
        switch self {
        case .files(let history, let storage, let lastCommitTime, let root):
            if lastCommitTime > 0, time >= lastCommitTime { return root.child(at: path) }
            // Written before it is read: a write committed before `time` may still be queued.
            storage.log.drain()
            return try history.tree(at: time).child(at: path)
        case .empty: return .empty
        case .none(let reason): throw .unavailable(reason)
        }
    }

    /// The writes that changed `path` in the window, the most recent `limit`, oldest first.
    func changes(at path: Path, from: Int64, to: Int64, limit: Int) throws(HistoryError) -> [HistoryChange] {
        switch self {
        case .files(let history, let storage, _, _):
            storage.log.drain()
            return try history.changes(at: path, from: from, through: to, limit: limit)
        case .empty: return []
        case .none(let reason): throw .unavailable(reason)
        }
    }
}
