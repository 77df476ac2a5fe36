import KindlingCore
import NIOPosix

/// What reading a namespace's past needs, taken on its executor and used off it (the reading
/// takes long and touches only files, JetStream and immutable values).
enum HistoryAccess: Sendable {
    /// The namespace's files, the time of its last committed write (0 when not known) and its
    /// tree now: an instant at or after that write is answered from the tree.
    case files(NamespaceHistory, NamespaceStorage, lastCommitTime: Int64, root: Node)
    /// The namespace's history in the cluster's JetStream, the time of the last write this node
    /// committed and its tree now, and on the leader its log, whose queued batches are published
    /// before the stream is read.
    case cluster(ClusterHistory, lastCommitTime: Int64, root: Node, log: ReplicatedLog?)
    /// A namespace never written: its past is empty.
    case empty
    /// The namespace keeps no history here, and why.
    case none(String)

    /// What a read of the past found.
    enum Answer: Sendable {
        case node(Node)
        case changes([HistoryChange])
    }

    /// The answer to `past` at `path`: files are read on one of `workers` (blocking reads never
    /// run on an event loop or a cooperative thread), a cluster's history from JetStream.
    func answer(_ past: PastRead, at path: Path, workers: NIOThreadPool) async throws(HistoryError) -> Answer {
        switch self {
        case .files(let history, let storage, let lastCommitTime, let root):
            if case .at(let time) = past, lastCommitTime > 0, time >= lastCommitTime { return .node(root.child(at: path)) }
            let outcome: Result<Answer, HistoryError>
            do {
                outcome = try await workers.runIfActive { () -> Result<Answer, HistoryError> in
                    // Written before it is read: a write committed before the instant may still be queued.
                    storage.log.drain()
                    do throws(HistoryError) {
                        switch past {
                        case .at(let time): return .success(.node(try history.tree(at: time).child(at: path)))
                        case .changes(let from, let to, let limit):
                            return .success(.changes(try history.changes(at: path, from: from, through: to, limit: limit)))
                        }
                    } catch {
                        return .failure(error)
                    }
                }
            } catch {
                throw .shuttingDown
            }
            return try outcome.get()
        case .cluster(let history, let lastCommitTime, let root, let log):
            // Published before it is read, as above.
            await log?.drain()
            switch past {
            case .at(let time):
                if lastCommitTime > 0, time >= lastCommitTime { return .node(root.child(at: path)) }
                return .node(try await history.node(at: path, time: time))
            case .changes(let from, let to, let limit):
                return .changes(try await history.changes(at: path, from: from, through: to, limit: limit))
            }
        case .empty:
            if case .at = past { return .node(.empty) }
            return .changes([])
        case .none(let reason):
            throw .unavailable(reason)
        }
    }
}
