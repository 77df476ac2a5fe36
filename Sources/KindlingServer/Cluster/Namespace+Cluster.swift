import Dispatch
import Foundation
import KindlingCore
import KindlingProtocol
import Logging
import Metrics
import NATSClient
import NIOCore
import Synchronization

/// A namespace in cluster mode (docs/cluster.md): taking its lease and leading it through a
/// replicated log, serving writes forwarded by followers, or following its log, and the
/// hand-over between these. Runs on the namespace's queue like the rest of `Namespace`.
extension Namespace {

    /// Serves the namespace in `node`'s cluster; called once, right after `init`, before anyone
    /// uses the namespace. The queue holds every block until the namespace has read its log
    /// from the stream, so no request sees it half loaded. The first node that opens the
    /// namespace takes its lease and leads; the others follow its log.
    nonisolated func joinCluster(_ node: ClusterNode) {
        runNow { namespace in namespace.startCluster(node) }
    }

    /// `joinCluster` on the namespace.
    private func startCluster(_ node: ClusterNode) {
        cluster = node
        durability = .memory
        // A write is one message of the log, and a connection's registrations one key's value.
        var limits = state.limits
        limits.maxWriteBytes = node.maxWriteBytes
        limits.maxOnDisconnectBytes = min(limits.maxOnDisconnectBytes, node.maxWriteBytes / 2)
        state = NamespaceState(
            name: name, root: state.database.tree.root, rules: state.rules, rulesAreOpen: state.rulesAreOpen, rulesDebug: state.rulesDebug,
            rulesCoverage: state.rulesCoverage,
            limits: limits)
        startJoining(node)
        let period = node.configuration.leaseTime
        clusterTicker = Task { [weak self] in
            var suspects: Set<String> = []
            while !Task.isCancelled {
                try? await Task.sleep(for: period)
                guard let self, !Task.isCancelled else { return }
                suspects = await self.clusterTick(node, suspects: suspects)
            }
        }
    }

    /// Once a lease time. The leader runs the registrations of dead members. A follower whose
    /// leader died takes the lease as soon as it is free rather than at the next write, so the
    /// dead leader's clients' onDisconnect writes run even when nobody writes (one key-value
    /// read per namespace a node follows, per lease time). Returns the members the sweep found
    /// missing.
    private func clusterTick(_ node: ClusterNode, suspects: Set<String>) async -> Set<String> {
        let standing = await onQueue { $0.standing }
        if standing == .leading { return await sweepRegistrations(node, suspects: suspects) }
        guard standing == .following else { return [] }
        do {
            guard try await node.leases.get(name) == nil else { return [] }
        } catch {
            return []
        }
        run { namespace in namespace.takeOver(node) { _, _ in } }
        return []
    }

    /// Starts reading the log from the start, the queue held until it is read: the role is
    /// `joining` with its reader before the reader runs. Called before the queue runs anything,
    /// or on it.
    private func startJoining(_ node: ClusterNode) {
        queueHeld.store(true, ordering: .releasing)
        queue.suspend()
        let (go, start) = AsyncStream<Never>.makeStream()
        let reader = Task {
            for await _ in go {}
            await self.startClusterRole(node)
        }
        perform(changeRole(.join(reader)), node: node)
        start.finish()
    }

    /// Carries out what a change of role asks, in order.
    func perform(_ actions: [Role.Action], node: ClusterNode) {
        // Set when leading stops: what is held from there on surely never reached the log.
        var unstored: HeldDeliveries.Unstored?
        for action in actions {
            switch action {
            case .stopReading(let reader):
                reader.cancel()
            case .stopLeading(let leadership, let reason):
                metrics?.leading(false)
                leadership.forwardedWrites.cancel()
                leadership.log.stop(reason)
                unstored = leadership.log.unstored
                leadership.lease.abandon()
                logger.error("deposed as the namespace's leader: \(reason)")
            case .abandonHeld:
                let dropped = held.abandon(unstored: unstored)
                if dropped > 0 {
                    logger.warning("refused the answers held for records this node will not have", metadata: ["refused-held": "\(dropped)"])
                }
            case .rejoin:
                rejoin(node)
            case .serve:
                makeOrphanedRegistrations(node)
                queue.resume()
                queueHeld.store(false, ordering: .releasing)
            case .resume:
                queue.resume()
                queueHeld.store(false, ordering: .releasing)
            }
        }
    }

    /// Takes the lease (or not), reads the namespace's log to its end, then either leads (writes
    /// go to a `ReplicatedLog` expecting the log's last sequence) or goes on following the log.
    /// Until the queue resumes, nothing else touches the state, so the records read up to then
    /// are committed here, off the queue.
    private func startClusterRole(_ node: ClusterNode) async {
        // NATS may be electing leaders (a server was just lost): the join is retried for a
        // while, with the queue still suspended, so no request is answered from a half-read log.
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                try await joinOnce(node)
                return
            } catch {
                if ContinuousClock.now < deadline, !Task.isCancelled {
                    logger.warning("cannot join the namespace in the cluster yet; retrying", metadata: ["error": "\(error)"])
                    try? await Task.sleep(for: .milliseconds(500))
                    continue
                }
                logger.error("cannot join the namespace in the cluster; its requests are refused until a later attempt succeeds: \(error)")
                // Answers waiting for records this node will not read now are refused.
                perform(changeRole(.joinFailed(.unavailable(Namespace.notJoined))), node: node)
                guard !Task.isCancelled else { return }
                // NATS out of reach for long: try again later, from the start (closing whoever
                // connected meanwhile), rather than refuse the namespace until a restart.
                try? await Task.sleep(for: Namespace.rejoinDelay)
                guard !Task.isCancelled else { return }
                run { namespace in if namespace.unserved != nil { namespace.rejoin(node) } }
                return
            }
        }
    }

    /// One attempt of `startClusterRole`: throws only before the queue resumes (a lease taken is
    /// given back first).
    private func joinOnce(_ node: ClusterNode) async throws {
        let subject = ClusterNode.logSubject(name)
        let lease = try await NamespaceLease.acquire(name, node: node)
        var reader: OrderedConsumer?
        var messages: AsyncStream<JetStreamMessage>.Iterator?
        var applied: UInt64 = 0
        do {
            // The snapshot first: the log before it may be purged.
            if let snapshot = try await loadClusterSnapshot(node) {
                try adopt(snapshot)
                applied = snapshot.streamSequence
            }
            let last = try await Namespace.lastSubjectSequence(node, subject: subject)
            reader =
                lease == nil || last > applied
                ? try await node.jetStream.orderedConsumer(
                    stream: ClusterNode.logStream, startSequence: applied + 1, filterSubject: subject, heartbeat: .seconds(1))
                : nil
            messages = reader?.makeAsyncIterator()
            while applied < last, let message = await messages?.next() {
                try commitLogged(message)
                applied = message.streamSequence
            }
            guard applied >= last else { throw StorageError.corrupt("the log of \(subject) ended at \(applied), before its last batch \(last)") }
            if let lease {
                await reader?.stop()
                let requests = try await node.client.subscribe(ClusterNode.rpcSubject(name))
                let leadership = lead(node, lease: lease, lastSubjectSequence: applied, head: logChain.head, requests: requests)
                perform(changeRole(.joined(leadership)), node: node)
                return
            }
        } catch {
            await reader?.stop()
            await lease?.release()
            throw error
        }
        logger.info("following the namespace's log", metadata: ["stream-sequence": "\(applied)"])
        perform(changeRole(.joined(nil)), node: node)
        while let message = await messages?.next() {
            let read = await onQueue { namespace -> Bool in
                // Only a follower commits what it reads. A take-over that led meanwhile cancelled
                // this reader, but a message it had taken already (the old leader's last batch,
                // landed after the take-over read the log's end) must not enter the leader's
                // tree: it would release the answers of writes the log will refuse. The leader,
                // expecting the end it read, can publish nothing more: it is deposed now, not at
                // its next publish, which never comes while its clients' answers wait behind
                // that batch's records (a CI rehearsal's forwarded writers stalled so).
                guard case .following = namespace.role else {
                    if let leadership = namespace.role.leadership, message.streamSequence > namespace.logChain.read,
                        !leadership.log.published(message.headers)
                    {
                        leadership.log.stop(
                            "another node's batch (stream sequence \(message.streamSequence)) landed after this node took the lead: deposed")
                    }
                    return false
                }
                do {
                    try namespace.commitLogged(message)
                    return true
                } catch {
                    // A batch missing before this one (this node read behind the purge), or a
                    // damaged one: start over from the snapshot.
                    namespace.logger.error("cannot follow the namespace's log; reading it again from the snapshot: \(error)")
                    namespace.perform(namespace.changeRole(.readFailed), node: node)
                    return false
                }
            }
            if !read { break }
        }
        await reader?.stop()
    }

    /// The stream sequence of the last message on `subject`, 0 when it has none.
    static func lastSubjectSequence(_ node: ClusterNode, subject: String) async throws(JetStreamError) -> UInt64 {
        do {
            return try await node.jetStream.lastMessage(stream: ClusterNode.logStream, subject: subject).sequence
        } catch {
            guard error.apiError?.errCode == JetStreamAPIError.noMessageFound else { throw error }
            return 0
        }
    }

    /// Starts leading: writes from now on are published after `lastSubjectSequence` (the
    /// subject's last message), building on batch `head` (the last one committed here, the same
    /// unless the last message is void), the lease is renewed and followers' writes are served.
    /// Returns the leadership for the role.
    func lead(
        _ node: ClusterNode, lease: NamespaceLease, lastSubjectSequence: UInt64, head: UInt64, requests: NATSSubscription
    ) -> Leadership {
        let term = "\(node.configuration.nodeID).\(lease.currentRevision)"
        let log = ReplicatedLog(
            namespace: name, node: node, lastSubjectSequence: lastSubjectSequence, head: head, durable: lastSequence, term: term,
            logger: logger, metrics: metrics, leaseIsFresh: { lease.isFresh },
            onDurable: { [held] sequence in held.release(through: sequence) },
            onDeposed: { [weak self] reason in self?.depose(reason, term: term) }
        )
        metrics?.leading(true)
        lease.keepAlive { [weak self] reason in self?.depose(reason, term: term) }
        let forwardedWrites = Task { [weak self] in
            for await request in requests {
                guard let self else { break }
                self.serveForwarded(request, node: node)
            }
            await requests.unsubscribe()
        }
        logger.notice("leading the namespace", metadata: ["node": "\(node.configuration.nodeID)", "stream-sequence": "\(lastSubjectSequence)"])
        return Leadership(log: log, lease: lease, requests: requests, forwardedWrites: forwardedWrites)
    }

    /// Stops leading at once (a lost lease, or another node wrote the log): writes are refused
    /// from now on, everything still held for the log is refused instead of sent, and the
    /// namespace reads its log again. Only the leadership `term` is deposed: a second report of
    /// the same loss (from the lease and from the log) finds a later term, or none, and changes
    /// nothing.
    private nonisolated func depose(_ reason: String, term: String) {
        run { namespace in
            guard let node = namespace.cluster else { return }
            namespace.perform(namespace.changeRole(.deposed(term: term, reason: reason)), node: node)
        }
    }

    /// After a deposal: this node's tree may hold writes that were never published, so it is
    /// dropped with everyone who saw it. Realtime connections are closed (the SDKs reconnect,
    /// resend what was not acknowledged and listen again), event streams are cancelled, and the
    /// namespace reads its log again from the start, as a follower (or as the leader, should the
    /// lease be free).
    private func rejoin(_ node: ClusterNode) {
        for (connection, outbound) in outbounds {
            switch outbound {
            case .webSocket(let outbound):
                outbounds[connection] = nil
                forgottenConnections.insert(connection)
                orphanRegistrations(of: connection)
                outbound.close(reason: "The cluster node serving this database changed role; reconnect.")
            case .eventStream(let outbound):
                // The stream's use of the namespace ends here: its later closeStream finds nothing.
                outbounds[connection] = nil
                outbound.end(with: EventStreamEncoding.cancel)
                release()
            }
        }
        report()
        // The namespace's own rules come back from the snapshot or the log.
        ownRules = nil
        clusterSnapshotCovered = 0
        state = NamespaceState(
            name: name, root: .empty, rules: serverRules.rules, rulesAreOpen: serverRules.open, rulesDebug: state.rulesDebug,
            rulesCoverage: state.rulesCoverage, limits: state.limits)
        keepProfiling()
        report()
        lastSequence = 0
        logChain = LogChain()
        recentWriteIDs = RecentWriteIDs()
        startJoining(node)
    }

    /// Commits one message of the log that this node has not applied: a batch's records, so
    /// local listeners get their events (no rules are checked: the leader decided), or a rules
    /// change. Only a batch that continues what this node applied is committed (`LogChain`): a
    /// batch that forks the log is skipped, and one built on a batch this node never read throws,
    /// so the node reads the log again rather than serve past the hole.
    private func commitLogged(_ message: JetStreamMessage) throws {
        let previous = message.headers?[ReplicatedLog.previousHeader].flatMap { UInt64($0) }
        switch logChain.admit(message.streamSequence, previous: previous) {
        case .apply:
            break
        case .alreadyRead:
            return
        case .void(let previous):
            metrics?.logBreaks(.fork)
            logger.warning(
                "skipped a batch that forks the namespace's log: it builds on batch \(previous), which another batch continued; its leader did not acknowledge it",
                metadata: ["stream-sequence": "\(message.streamSequence)", "message-id": "\(message.headers?["Nats-Msg-Id"] ?? "")"])
            return
        case .gap(let previous):
            metrics?.logBreaks(.gap)
            throw StorageError.corrupt(
                "message \(message.streamSequence) of \(ClusterNode.logSubject(name)) builds on batch \(previous), which this node never read (the last it committed is \(logChain.head))"
            )
        }
        if let sequence = message.headers?[ReplicatedLog.rulesHeader] {
            return try commitRules(message.payload, sequence: sequence, streamSequence: message.streamSequence)
        }
        let payload = message.payload
        let streamSequence = message.streamSequence
        let contents = try LogSegmentReader.read(payload, file: "\(ClusterNode.logSubject(name)) #\(streamSequence)", repair: false)
        if let torn = contents.tornTail { throw StorageError.corrupt("batch \(streamSequence) of \(ClusterNode.logSubject(name)): \(torn)") }
        try checkContinuity(contents.records.first?.sequence, streamSequence: streamSequence)
        var out: [Outgoing] = []
        var committed = 0
        for record in contents.records where record.sequence > lastSequence {
            state.commit(record.write, into: &out)
            recentWriteIDs.remember(record)
            lastSequence = record.sequence
            lastCommitTime = max(lastCommitTime, record.time)
            committed += 1
        }
        _ = state.takeJournal()
        committedWrites += UInt64(committed)
        report()
        if profile != nil { publishProfile() }
        dispatch(out)
        // Answers to this node's forwarded writes, now that their records are in the tree.
        held.release(through: lastSequence)
    }

    /// Runs `body` on `queue` and returns its result.
    nonisolated func onQueue<T: Sendable>(_ body: @escaping @Sendable (isolated Namespace) -> T) async -> T {
        await withCheckedContinuation { continuation in run { namespace in continuation.resume(returning: body(namespace)) } }
    }

    /// Leaves the cluster at shutdown: answers the writes followers forwarded, waits for the
    /// writes in flight, gives the lease back so another node can lead at once, and stops
    /// following.
    ///
    /// A forwarded write NATS delivered is decided and answered, never dropped: dropped, its
    /// follower would wait for its request's timeout and answer a write that was never made
    /// "may or may not be stored". So the leader stops taking them (followers asking from now
    /// on hear that nobody serves, and take the lease once it is given back), serves what was
    /// delivered until then, and drains the log with those writes in it; `ClusterNode.close`
    /// then sends their answers before the connection closes.
    nonisolated func leaveCluster() async {
        let (role, sweeper) = runNow { namespace in (namespace.role, namespace.clusterTicker) }
        role.reader?.cancel()
        sweeper?.cancel()
        guard let leadership = role.leadership else { return }
        await leadership.requests.drain()
        await leadership.forwardedWrites.value
        // The blocks the last forwarded writes put on the queue have run: their records are in
        // the log, or their refusals answered.
        await onQueue { _ in }
        await leadership.log.drain()
        await leadership.lease.release()
    }
}
