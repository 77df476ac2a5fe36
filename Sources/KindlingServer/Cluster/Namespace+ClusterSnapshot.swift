import Dispatch
import KindlingCore
import CoreMetrics
import Logging
import Metrics
import NATSClient

/// Snapshots in cluster mode (docs/cluster.md): the leader writes the tree to the
/// `kindling_snapshots` object store once it has published `snapshotAfterBytes` of log since the
/// last one, then purges the namespace's log behind the snapshot before it, or, with a history
/// policy, keeps it for history and purges only what the policy no longer keeps
/// (`ClusterHistory`); a node that starts loads the newest snapshot and reads the log after it. Runs on the namespace's queue like the
/// rest of `Namespace`.
extension Namespace {

    /// On the leader, after an append: starts a snapshot when enough log was published since
    /// the last one and none is being written.
    func snapshotIfDue(_ log: ReplicatedLog) {
        guard let node = cluster, let leadership = role.leadership, !leadership.snapshotting,
            log.appendedBytes - leadership.snapshotMark >= node.configuration.snapshotAfterBytes
        else { return }
        startClusterSnapshot(log, node: node)
    }

    /// Snapshots the tree as of the last record. Every batch the log has acknowledged so far
    /// holds records the tree has, so the snapshot covers the stream up to the last acknowledged
    /// batch; batches still on their way come after it. The snapshot is uploaded only once its
    /// last record is in the log, so it never holds a write the log lacks.
    func startClusterSnapshot(_ log: ReplicatedLog, node: ClusterNode) {
        let mark = log.appendedBytes
        let kept = KeptLog(mark: mark, bytes: mark - (role.leadership?.historyMark ?? 0), time: HistoryTime.now())
        updateLeadership { leadership in
            leadership.snapshotting = true
            leadership.snapshotMark = mark
        }
        let snapshot = ClusterSnapshot(
            recordSequence: lastSequence, streamSequence: log.head, rulesSource: ownRules?.source, root: state.database.tree.root,
            writeIDs: recentWriteIDs.newest(within: RecentWriteIDs.snapshotAge))
        let previous = clusterSnapshotCovered
        let term = log.term
        // Through `whenDurable`: the log may have acknowledged the last record already (its
        // thread races this one, and an operator's snapshot of an idle namespace always comes
        // after), and a hold nothing releases would keep every answer after it.
        whenDurable(
            lastSequence,
            then: { [term] in Task { await self.uploadSnapshot(snapshot, kept: kept, purgingThrough: previous, term: term, node: node) } },
            refused: { [term] in self.run { namespace in namespace.snapshotEnded(term: term) } })
    }

    /// Writes `snapshot` to the object store if this node still leads in the same term (a
    /// deposed leader's late snapshot could replace a newer one), then purges the log up to the
    /// previous snapshot's stream sequence: the log keeps one snapshot interval of margin behind
    /// the newest snapshot, for followers that read behind, for a snapshot that turns out
    /// unreadable, and for a deposed leader that has not noticed yet.
    private nonisolated func uploadSnapshot(
        _ snapshot: ClusterSnapshot, kept: KeptLog, purgingThrough previous: UInt64, term: String, node: ClusterNode
    ) async {
        let started = ContinuousClock.now
        var covered: UInt64?
        var keptForHistory = false
        do {
            let bytes = try snapshot.encoded()
            if await !onQueue({ $0.replicated?.term == term }) {
                logger.info("not writing a snapshot taken while leading an earlier term")
            } else {
                try await node.snapshots.put(name, bytes)
                covered = snapshot.streamSequence
                metrics?.snapshotDuration.record(duration: ContinuousClock.now - started)
                metrics?.snapshotBytes.set(bytes.count)
                logger.info(
                    "wrote snapshot to the cluster",
                    metadata: [
                        "sequence": "\(snapshot.recordSequence)", "stream-sequence": "\(snapshot.streamSequence)", "bytes": "\(bytes.count)",
                        "duration": "\(ContinuousClock.now - started)",
                    ])
                var purgeBefore: UInt64? = previous > 0 ? previous + 1 : nil
                let history = ClusterHistory(namespace: name, node: node)
                if let policy = node.configuration.history {
                    do throws(HistoryError) {
                        let outcome = try await history.keep(
                            snapshot, bytes: bytes, takenAt: kept.time, logBytes: kept.bytes, previous: previous, policy: policy,
                            now: node.configuration.historyClock())
                        keptForHistory = outcome.kept
                        purgeBefore = outcome.purgeBefore
                    } catch {
                        // The log stays whole: the next snapshot tries again.
                        logger.warning("could not keep the snapshot for history; the log is not purged yet: \(error)")
                        purgeBefore = nil
                    }
                } else {
                    await history.forget()
                }
                if let purgeBefore {
                    try await node.jetStream.purgeStream(ClusterNode.logStream, subject: ClusterNode.logSubject(name), before: purgeBefore)
                }
            }
        } catch {
            logger.warning("could not write the namespace's snapshot to the cluster: \(error)")
        }
        let written = covered
        let historyMark = keptForHistory ? kept.mark : nil
        run { namespace in
            if let historyMark { namespace.updateLeadership { if $0.term == term { $0.historyMark = historyMark } } }
            namespace.snapshotEnded(term: term)
            if let written { namespace.clusterSnapshotCovered = max(namespace.clusterSnapshotCovered, written) }
        }
    }

    /// Where the log stood when a snapshot was taken, for its history base.
    struct KeptLog: Sendable {
        /// The log's `appendedBytes` then.
        var mark: Int
        /// Log bytes published since the last snapshot kept for history, in this leadership.
        var bytes: Int
        /// When the snapshot was taken: after its last write was committed.
        var time: Int64
    }

    /// A snapshot of term `term` was written or given up: the leader may start the next one
    /// (a later term's leadership has its own marks).
    private func snapshotEnded(term: String) {
        updateLeadership { leadership in
            if leadership.term == term { leadership.snapshotting = false }
        }
    }

    /// The newest snapshot of the namespace, nil when none was written. Throws when it cannot
    /// be read: the namespace is then not served from a log whose start may be purged.
    func loadClusterSnapshot(_ node: ClusterNode) async throws -> ClusterSnapshot? {
        guard let bytes = try await node.snapshots.get(name) else { return nil }
        let snapshot = try ClusterSnapshot.decode(bytes, name: name)
        logger.info(
            "loaded the namespace's snapshot", metadata: ["sequence": "\(snapshot.recordSequence)", "stream-sequence": "\(snapshot.streamSequence)"])
        return snapshot
    }

    /// Record sequences in the log follow each other without a hole, so a message whose first
    /// record comes after the next one expected means batches before it are gone from this
    /// node's reading (purged behind a newer snapshot while it read far behind).
    func checkContinuity(_ first: UInt64?, streamSequence: UInt64) throws(StorageError) {
        guard let first, first > 0, first - 1 > lastSequence else { return }
        throw StorageError.corrupt(
            "message \(streamSequence) of \(ClusterNode.logSubject(name)) starts at record \(first), but the last one read is \(lastSequence)")
    }

    /// Puts a loaded snapshot's tree and rules in place of the (empty) state, before the log
    /// after it is read. Run while `queue` is suspended.
    func adopt(_ snapshot: ClusterSnapshot) throws(StorageError) {
        var rules = serverRules
        ownRules = nil
        if let source = snapshot.rulesSource {
            do throws(RulesError) {
                let own = try RulesDocument.parse(source, coverage: state.rulesCoverage)
                ownRules = own
                rules = (own, false)
            } catch {
                throw StorageError.corruptSnapshot(file: "kindling_snapshots/\(name)", reason: "its rules do not load: \(error)")
            }
        }
        state = NamespaceState(
            name: name, root: snapshot.root, rules: rules.rules, rulesAreOpen: rules.open, rulesShared: ownRules == nil,
            rulesDebug: state.rulesDebug, rulesCoverage: state.rulesCoverage, limits: state.limits)
        keepProfiling()
        lastSequence = snapshot.recordSequence
        logChain = LogChain(head: snapshot.streamSequence)
        recentWriteIDs = RecentWriteIDs()
        for write in snapshot.writeIDs { recentWriteIDs.remember(write.id, write.entry, time: write.time) }
        clusterSnapshotCovered = snapshot.streamSequence
        report()
    }
}
