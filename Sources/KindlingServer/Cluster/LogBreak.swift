/// A break in a namespace's log, as `kindling_cluster_log_breaks_total` counts them.
enum LogBreak: String, CaseIterable, Sendable {
    /// A follower read a batch built on one it never read: it reads the log again rather than
    /// serve past the hole.
    case gap
    /// A batch built on one another batch already continued (two leaders' batches stored after
    /// the same one): skipped by every reader, and refused by its leader, which is deposed.
    case fork
}
