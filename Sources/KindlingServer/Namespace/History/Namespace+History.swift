import KindlingCore
import NIOCore

extension Namespace {
    /// For an admin, what reading this namespace's past needs (`HistoryAccess`), after the same
    /// admission as any read; counted as `history`. Ends one use.
    nonisolated func historyAccess(as auth: AuthState, promise: EventLoopPromise<Result<HistoryAccess, Refusal>>) {
        run { namespace in
            defer { namespace.release() }
            let result = namespace.historyAccess(as: auth)
            let refusal: Refusal? = if case .failure(let refusal) = result { refusal } else { nil }
            namespace.state.tally.record(.history, RequestOutcome(refusal))
            namespace.report()
            promise.succeed(result)
        }
    }

    private func historyAccess(as auth: AuthState) -> Result<HistoryAccess, Refusal> {
        var gate = admissionGate()
        if case .refuse(let refusal) = admit(.read, from: .rest(auth), through: &gate) { return .failure(refusal) }
        // The past holds data the rules may hide now, and data since deleted: admins only.
        if let refusal = state.refusalOfRulesAccess(by: auth) { return .failure(refusal) }
        switch durability {
        case .stored(let disk):
            return .success(.files(disk.storage.history, disk.storage, lastCommitTime: lastCommitTime, root: state.database.tree.root))
        case .unclaimed:
            return .success(.empty)
        case .memory where cluster != nil:
            guard let node = cluster, node.configuration.history != nil else {
                return .success(.none("this cluster keeps no history: it runs with --history off"))
            }
            return .success(
                .cluster(
                    ClusterHistory(namespace: name, node: node), lastCommitTime: lastCommitTime, root: state.database.tree.root,
                    log: role.leadership?.log))
        case .memory, .failed:
            return .success(.none("this server keeps no history: it runs without a data directory (--in-memory)"))
        }
    }
}

extension Namespace {
    /// From now on, each logged write says who made it (`HistoryPolicy.recordsWriters`).
    nonisolated func recordWriters() {
        runNow { namespace in namespace.state.recordsWriters = true }
    }
}
