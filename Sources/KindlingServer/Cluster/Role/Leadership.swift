import NATSClient

/// What a namespace's leader has and no other role does: the replicated log its writes go to,
/// the lease that lets it lead, the server of writes its followers forward, and where its
/// snapshots stand.
struct Leadership: LeadershipTerm, Sendable {
    let log: ReplicatedLog
    let lease: NamespaceLease
    /// The followers' forwarded writes (`kindling.rpc.<namespace>`), which a leader leaving
    /// drains before it lets go (`Namespace.leaveCluster`).
    let requests: NATSSubscription
    /// Serves `requests` until they end (drained), or until cancelled (deposed).
    let forwardedWrites: Task<Void, Never>
    /// The log's `appendedBytes` when the leader last started a snapshot.
    var snapshotMark = 0
    /// The log's `appendedBytes` when the leader last kept a snapshot for history.
    var historyMark = 0
    /// True while the leader writes a snapshot.
    var snapshotting = false

    var term: String { log.term }
}
