import KindlingCore

/// One namespace as it was at one instant: its tree (immutable, so writing it out later sees
/// exactly that instant whatever is written meanwhile) and the rules then in force.
struct BackupCapture: Sendable {
    let namespace: String
    let root: Node
    /// The rules in force, as they were given (the server's `--rules`, or the namespace's own).
    let rules: String
    /// The backup's instant, in milliseconds since the Unix epoch (its files' names).
    let time: Int64
}

extension Namespace {
    /// The tree and rules now, taken in one block on the namespace's queue: a write is wholly
    /// before it or wholly after it. The block only copies two references, so writes wait for
    /// it no longer than for any read; the backup is written off the queue.
    nonisolated func backupCapture(time: Int64) -> BackupCapture {
        runNow { namespace in
            BackupCapture(namespace: namespace.name, root: namespace.state.database.tree.root, rules: namespace.state.rules.source, time: time)
        }
    }
}
