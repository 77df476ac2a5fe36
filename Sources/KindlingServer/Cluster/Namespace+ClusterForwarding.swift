import KindlingCore
import Logging
import NATSClient

/// A cluster namespace's forwarded writes (docs/cluster.md): a follower sends its clients'
/// writes to the leader, again to whoever leads next when one goes unanswered, and the leader
/// decides each once, by its id. Runs on the namespace's queue like the rest of `Namespace`.
extension Namespace {
    /// Sends a write to the leader and hands `complete` the answer, on `queue`: a refusal at
    /// once, a committed write once this node has committed its record from the log. The node
    /// that decides a write counts it, so a refusal is counted here only when no leader decided
    /// the write (it could not be reached, or did not answer).
    ///
    /// A write the leader does not answer (it died, hung, left or was cut off, or the request
    /// was lost) is sent again, with the id it got here, to whoever leads by then, this node
    /// included (`takeOver`), until `ForwardingAttempts` gives up (its comment says why sending
    /// again cannot apply a write twice).
    func forward(_ write: ForwardedWrite, node: ClusterNode, complete: @escaping @Sendable (Answer) -> Void) {
        var write = write
        if write.id == nil { write.id = NATSClient.randomToken() }
        let payload = write.encoded()
        guard payload.count <= node.maxBatchBytes else {
            return undecided(
                write, .limitExceeded("A write may be at most \(node.maxWriteBytes) bytes in cluster mode (one NATS message)"), complete: complete)
        }
        let attempts = ForwardingAttempts(now: .now, leaseTime: node.configuration.leaseTime)
        let sent = write
        Task.detached { await self.sendForwarded(sent, payload: payload, node: node, attempts: attempts, complete: complete) }
    }

    /// `forward`'s attempts, one after the other, until one decides.
    private nonisolated func sendForwarded(
        _ write: ForwardedWrite, payload: [UInt8], node: ClusterNode, attempts: ForwardingAttempts,
        complete: @escaping @Sendable (Answer) -> Void
    ) async {
        var attempts = attempts
        let subject = ClusterNode.rpcSubject(name)
        while let timeout = attempts.timeout(now: .now) {
            let outcome: ForwardingAttempts.Outcome
            do {
                let message = try await node.client.request(subject, payload: payload, timeout: timeout)
                // An answer that does not decode may still be a leader's decision: like a lost one.
                outcome = (try? ForwardedAnswer.decode(message.payload)).map { .answered($0) } ?? .failed
            } catch {
                outcome = error == .timeout() ? .timedOut : error == .noResponders() ? .noResponders : .failed
            }
            switch attempts.decide(outcome, now: .now) {
            case .answer(let answer):
                guard await answerForwarded(write, answer, complete: complete) else {
                    // Committed by its leader, but this node stopped reading the log before it
                    // had the record (it led for a moment and was deposed, or reads the log
                    // again): sent again, whoever leads answers it from its id once more.
                    if case .retry(let pause) = attempts.decide(.notCommittedHere, now: .now) {
                        try? await Task.sleep(for: pause)
                        continue
                    }
                    let refusal = attempts.refusalAtDeadline
                    return run { namespace in namespace.undecided(write, refusal, complete: complete) }
                }
                return
            case .giveUp(let refusal):
                return run { namespace in namespace.undecided(write, refusal, complete: complete) }
            case .retry(let pause):
                // Decided here when this node leads now (the lease was free): the answer is
                // final unless it stopped leading before the log had the write.
                if let answer = await leadAndDecide(write, node: node) {
                    let local: ForwardingAttempts.Outcome
                    switch answer {
                    case .refused(.unconfirmed): local = .leftUnconfirmed
                    case .refused(.unavailable(let message)) where message == Namespace.notLeading: local = .notLeading
                    default: return run { _ in complete(answer) }
                    }
                    switch attempts.decide(local, now: .now) {
                    case .retry(let pause): try? await Task.sleep(for: pause)
                    case .giveUp(let refusal): return run { _ in complete(.refused(refusal)) }
                    case .answer(let answer): if await answerForwarded(write, answer, complete: complete) { return }
                    }
                } else if pause > .zero {
                    try? await Task.sleep(for: pause)
                }
            }
        }
        let refusal = attempts.refusalAtDeadline
        run { namespace in namespace.undecided(write, refusal, complete: complete) }
    }

    /// A forwarded write that no leader decided, refused here with `refusal`: counted here.
    private func undecided(_ write: ForwardedWrite, _ refusal: Refusal, complete: @escaping @Sendable (Answer) -> Void) {
        state.count(write.operation, by: write.caller, refusal: refusal)
        logRefusals()
        report()
        complete(.refused(refusal))
    }

    /// Hands the leader's answer to a forwarded write to its client: a refusal at once, a
    /// committed write once this node has committed its record. False, with `complete` not
    /// called, when this node stops reading the log before it has the record: the write is
    /// stored, and is sent again to be answered from its id (never a 503, which firebase-admin
    /// resends, pushing a POST twice).
    private nonisolated func answerForwarded(
        _ write: ForwardedWrite, _ answer: ForwardedAnswer, complete: @escaping @Sendable (Answer) -> Void
    ) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            run { namespace in
                switch answer {
                case .refused(let refusal):
                    complete(.refused(refusal))
                    continuation.resume(returning: true)
                case .committed(let sequence, let pushed):
                    namespace.whenCommitted(
                        sequence,
                        then: { namespace in
                            complete(namespace.forwardedAnswer(write.operation, pushed: pushed))
                            continuation.resume(returning: true)
                        },
                        refused: { continuation.resume(returning: false) })
                }
            }
        }
    }

    /// Takes the namespace's lease if it is free (`takeOver`) and, leading now, decides `write`
    /// here (`applyLocally`); nil when this node does not lead.
    private nonisolated func leadAndDecide(_ write: ForwardedWrite, node: ClusterNode) async -> Answer? {
        let led = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            run { namespace in namespace.takeOver(node) { _, led in continuation.resume(returning: led) } }
        }
        guard led else { return nil }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Answer, Never>) in
            run { namespace in namespace.applyLocally(write) { answer in continuation.resume(returning: answer) } }
        }
    }

    /// Sends a request (a rules change, `ForwardedRules`; writes go through `forward`, which sends
    /// them again) to the leader on `kindling.rpc.<namespace>` and hands `reply` its answer,
    /// on `queue`. When no leader answers (none yet, or it died), this node takes the lease if
    /// it is free and runs `whenLeading` instead, on `queue`; if it cannot, `undecided` gets a
    /// refusal to retry. A request that timed out gets `unconfirmed` whether or not this node
    /// then leads: a leader that hung or was deposed after it put the request in the log stays
    /// silent, so the request may be stored, and made again here it would be pushed twice or
    /// undo a write committed after it. `undecided` gets the refusals made here, of requests no
    /// leader decided (so not counted by one).
    func askLeader(
        _ payload: [UInt8], node: ClusterNode, whenLeading: @escaping @Sendable (isolated Namespace) -> Void,
        undecided: @escaping @Sendable (isolated Namespace, Refusal) -> Void,
        reply: @escaping @Sendable (isolated Namespace, ForwardedAnswer) -> Void
    ) {
        let subject = ClusterNode.rpcSubject(name)
        guard payload.count <= node.maxBatchBytes else {
            return undecided(self, .limitExceeded("A write may be at most \(node.maxWriteBytes) bytes in cluster mode (one NATS message)"))
        }
        Task.detached {
            let answer: ForwardedAnswer
            do {
                let message = try await node.client.request(subject, payload: payload, timeout: .seconds(5))
                answer = try ForwardedAnswer.decode(message.payload)
            } catch {
                self.run { namespace in
                    // Not a 503 either, which firebase-admin resends (a POST twice).
                    let unconfirmed = (error as? NATSError) == .timeout()
                    namespace.takeOver(node) { namespace, led in
                        if unconfirmed { return undecided(namespace, .unconfirmed) }
                        guard led else {
                            return undecided(namespace, .unavailable("The namespace's leader could not be reached (\(error)); retry."))
                        }
                        whenLeading(namespace)
                    }
                }
                return
            }
            self.run { namespace in reply(namespace, answer) }
        }
    }

    /// Runs `then` on `queue` once this node has committed record `sequence` from the log, or
    /// `refused` if it stops reading the log first.
    func whenCommitted(_ sequence: UInt64, then: @escaping @Sendable (isolated Namespace) -> Void, refused: @escaping @Sendable () -> Void) {
        guard sequence > lastSequence else { return then(self) }
        // Released by `commitLogged`, on this queue.
        // Released on `queue` by `commitLogged`, or by the log's thread should this node lead
        // by then: `then` runs as a block of its own.
        held.send(PreparedDispatch(), after: sequence, then: { self.run(then) }, refused: refused)
    }

    /// Tries to become the leader of a namespace this node follows: takes the lease when it is
    /// free (its holder died: it expired), waits until the log is committed here to its last
    /// batch, and then leads, expecting that batch's sequence, so a write another node slipped
    /// in meanwhile makes the first publish fail instead of being overwritten. Tells `then`, on
    /// `queue`, whether it leads now.
    func takeOver(_ node: ClusterNode, then: @escaping @Sendable (isolated Namespace, Bool) -> Void) {
        guard case .following(_, takingOver: false) = role else { return then(self, standing == .leading) }
        perform(changeRole(.takeOverStarted), node: node)
        let subject = ClusterNode.logSubject(name)
        Task {
            var led = false
            do {
                if let lease = try await NamespaceLease.acquire(name, node: node) {
                    var last = try await Namespace.lastSubjectSequence(node, subject: subject)
                    let deadline = ContinuousClock.now + .seconds(10)
                    while ContinuousClock.now < deadline {
                        let read = await self.onQueue { $0.logChain.read }
                        if read == last { break }
                        try await Task.sleep(for: .milliseconds(10))
                        // The old leader's last batch, sent while its lease was fresh, landed
                        // after the end was asked: the end is asked again (it can send no other,
                        // its lease lapsed), rather than giving the lease up.
                        if read > last { last = try await Namespace.lastSubjectSequence(node, subject: subject) }
                    }
                    let requests = try await node.client.subscribe(ClusterNode.rpcSubject(name))
                    led = await self.onQueue { [last] namespace in
                        guard namespace.logChain.read == last, case .following(_, takingOver: true) = namespace.role else { return false }
                        let leadership = namespace.lead(
                            node, lease: lease, lastSubjectSequence: last, head: namespace.logChain.head, requests: requests)
                        namespace.perform(namespace.changeRole(.tookOver(leadership)), node: node)
                        return true
                    }
                    if !led {
                        let read = await self.onQueue { $0.logChain.read }
                        self.logger.warning(
                            "took the namespace's lease but not the lead: the log read to \(read), its last batch \(last); released the lease")
                        await requests.unsubscribe()
                        await lease.release()
                    }
                }
            } catch {
                self.logger.warning("could not take the namespace's lease: \(error)")
            }
            let outcome = led
            self.run { namespace in
                if !outcome { namespace.perform(namespace.changeRole(.takeOverFailed), node: node) }
                then(namespace, outcome)
            }
        }
    }

    /// Decides a write of this node's client here, now that it leads (after a take-over), as
    /// the leader decides a forwarded one; `complete` gets the answer on `queue` once the write
    /// is in the log. A write already committed (an earlier attempt reached the old leader, and
    /// its record is in the log this node read) is answered from its record instead. A node
    /// that does not lead (any more: deposed since its take-over) answers "not leading", so
    /// `forward` sends the write again with its id: forwarded from here (as `serve` would) it
    /// would get a new id, and the leader could apply it a second time.
    private func applyLocally(_ write: ForwardedWrite, complete: @escaping @Sendable (Answer) -> Void) {
        guard standing == .leading else { return complete(.refused(.unavailable(Namespace.notLeading))) }
        if let entry = write.id.flatMap({ recentWriteIDs[$0] }) {
            let pushed = write.pushedName(entry)
            return whenDurable(
                entry.sequence, then: { self.run { namespace in complete(namespace.forwardedAnswer(write.operation, pushed: pushed)) } },
                refused: { self.run { _ in complete(.refused(.unconfirmed)) } })
        }
        serve(write.operation, by: write.caller, writeID: write.id) { answer in self.run { _ in complete(answer) } }
    }

    /// On the leader: runs `then` once record `sequence` is in the log (at once when it is), or
    /// `refused` if this node stops leading before. Held like a write's answer, behind what is
    /// held before it.
    func whenDurable(_ sequence: UInt64, then: @escaping @Sendable () -> Void, refused: @escaping @Sendable () -> Void) {
        held.send(PreparedDispatch(), after: sequence, then: then, refused: refused)
        // Its release may have passed before it was held: released again (only the durable goes).
        if let replicated, replicated.durable >= sequence { held.release(through: replicated.durable) }
    }

    /// The answer to a forwarded write the leader committed, from this node's tree, which now
    /// holds it.
    private func forwardedAnswer(_ operation: Operation, pushed: Key?) -> Answer {
        let tree = state.database.tree
        switch operation {
        case .set(let path, _, _):
            let node = tree.node(at: path)
            return .written(.stored(node), location: node)
        case .update(let path, let members):
            let entries = members.compactMap { member -> MergeEntry? in
                guard let relative = try? Path(member.key) else { return nil }
                return MergeEntry(path: relative, node: tree.node(at: Path(keys: path.keys + relative.keys)))
            }
            return .written(.updated(entries), location: tree.node(at: path))
        case .push(let path, _):
            guard let pushed else { return .ok }
            return .written(.pushed(pushed), location: tree.node(at: path))
        default:
            return .ok
        }
    }

    /// The leader decides a follower's write as its own clients' (rules, preconditions, the
    /// log), and replies once the write is in the log, with its record's sequence.
    ///
    /// A node that does not lead (any more) does not reply at all. Every leader subscribes to
    /// the subject, and for a moment two may be subscribed (an old leader back from a
    /// partition, until it learns it was deposed); the follower takes the first reply. A
    /// refusal from the old one ("nothing was written") could beat the new leader's commit of
    /// the same write, and the client would be told a stored write was not made. Silent, the
    /// old one leaves the answer to the new leader, or, with none, to the follower's timeout
    /// and take-over.
    nonisolated func serveForwarded(_ message: NATSMessage, node: ClusterNode) {
        guard let reply = message.reply else { return }
        let respond: @Sendable (ForwardedAnswer) -> Void = { answer in node.reply(to: reply, payload: answer.encoded()) }
        run { namespace in
            let write: ForwardedWrite
            do throws(ValidationError) {
                let request = try JSONParser.parse(message.payload)
                if ForwardedRules.isRules(request) { return namespace.serveForwardedRules(request, respond: respond) }
                write = try ForwardedWrite.decode(request)
            } catch {
                return respond(.refused(.invalid(error)))
            }
            // Refused by the admission: this node does not lead (deposed, or failed; in cluster
            // mode nothing else refuses all writes), so it stays silent, as above.
            var gate = namespace.admissionGate()
            guard case .decide = namespace.admit(write.operation.admission, from: write.caller, through: &gate) else { return }
            // Sent again by its follower (no answer came): answered from its record, once in the
            // log, with the answer the first copy got.
            if let id = write.id, let entry = namespace.recentWriteIDs[id] {
                let pushed = write.pushedName(entry)
                return namespace.whenDurable(
                    entry.sequence, then: { respond(.committed(sequence: entry.sequence, pushed: pushed)) },
                    // Deposed before the record was in the log: left to the new leader, as below.
                    refused: {})
            }
            var out: [Outgoing] = []
            let answer = namespace.state.apply(write.operation, by: write.caller, now: Namespace.now(), into: &out)
            namespace.logRefusals()
            if namespace.profile != nil { namespace.publishProfile() }
            if case .refused(let refusal) = answer {
                // Held like a write's answer, behind the writes decided before it: a refusal
                // judged on a tree they changed (a compare-and-set whose tag they moved) holds
                // only if they reach the log. Sent at once, a write sent again that an old
                // leader's last batch stored, which this leader had not read when it decided
                // its own writes, was refused 412 while its increment stood. Deposed first, the
                // leader stays silent, as below, and the follower sends the write again.
                // And sent only while the lease is fresh, so no other node can lead: a leader
                // cut off until its lease lapsed, back before it learns another node leads, is
                // still subscribed to the forwarded writes and would refuse on its old tree a
                // write the new leader stores, and its refusal could reach the follower first.
                let lease = namespace.role.leadership?.lease
                namespace.finish(out, then: { if lease?.isFresh == true { respond(.refused(refusal)) } }, refused: {})
                return
            }
            let pushed: Key? = if case .written(.pushed(let key), _) = answer { key } else { nil }
            // The sequence `finish` gives the write's record, known before the reply is held with
            // its delivery: holding the reply after the append could miss the PubAck's release.
            let pending = UInt64(namespace.state.pendingWrites)
            let sequence = pending == 0 ? 0 : namespace.lastSequence + pending
            namespace.finish(
                out, writeID: write.id, then: { respond(.committed(sequence: sequence, pushed: pushed)) },
                // Deposed before the write was in the log: left to the new leader, as above.
                refused: {})
        }
    }
}
