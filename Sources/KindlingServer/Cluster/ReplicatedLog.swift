import Logging
import Metrics
import NATSClient
import Synchronization

/// A namespace's log in cluster mode, in the place of the file log: each batch of framed
/// `LogRecord`s (the bytes a log segment holds) is one JetStream publish to
/// `kindling.log.<namespace>`, and a batch is durable once JetStream acknowledges it, that is,
/// once a quorum of the NATS servers has it.
///
/// Every publish carries the stream sequence of the namespace's previous batch as its expected
/// last subject sequence. That sequence is known only from the previous PubAck, so one batch is
/// in flight at a time and what is appended meanwhile gathers into the next (group commit, as
/// the file log's fsync). A refusal of the expected sequence (10071) naming a later message
/// means a message follows the one expected; when the log says it is another node's, this node
/// was deposed. The log then stops for good, and `onDeposed` is told, so the namespace refuses
/// what it holds and stops leading. A refusal naming no later message is no answer: a stream
/// leader back from a partition answers so for a moment while the real one stores the batch.
/// A batch is sent only while the node surely holds its lease, so an old leader back from a
/// partition cannot get a batch in before a new leader's first one (which the log would then
/// refuse, deposing the new leader).
///
/// Every batch also names the batch it builds on (`Kindling-Previous`), which is what readers
/// check (`LogChain`), and its place is checked before it is acknowledged: nats-server before
/// 2.11 can store a second publish expecting the same last subject sequence when the first is
/// not applied yet (two leaders' batches in flight across a NATS leader change), so a batch
/// that JetStream acknowledged with another batch of the subject before it, after the one it
/// expected, lost its place: it is void for every reader, and this node was deposed. Its writes
/// are then answered "may or may not be stored", never acknowledged.
///
/// A change of the namespace's own rules is a publish of its own, in the same order: its
/// payload is the rules' source and its `Kindling-Rules` header the record sequence it takes,
/// so every follower puts the rules in force between the same two writes as the leader.
final class ReplicatedLog: Sendable {
    /// One publish to come: framed records, or a rules change.
    private struct Batch {
        var bytes: [UInt8]
        /// The record sequence of its last record (a rules change's own).
        var last: UInt64
        var isRules: Bool
    }

    /// The header naming a rules change's record sequence.
    static let rulesHeader = "Kindling-Rules"
    /// The header naming the stream sequence of the batch a batch builds on.
    static let previousHeader = "Kindling-Previous"

    private struct State {
        /// Publishes waiting for the one in flight, in order; records gather in the last batch.
        var pending: [Batch] = []
        /// Framed record bytes appended since the log was made (what snapshots are paced by).
        var appendedBytes = 0
        /// True while a publish is on its way.
        var inFlight = false
        /// The stream sequence of the subject's last message: what the next publish expects.
        var lastSubjectSequence: UInt64
        /// The stream sequence of the last batch of the namespace's chain (`LogChain.head`),
        /// which the next batch builds on: the subject's last message, unless that one is void.
        var head: UInt64
        /// The record sequence of the last record JetStream acknowledged (or that was in the log
        /// when this node started leading).
        var durable: UInt64
        /// The record sequence of the last record of the batch being published, from its first
        /// try until JetStream acknowledged it.
        var sending: UInt64?
        /// Why the log stopped; nil while it works.
        var failure: String?
        /// Set when the log stops: what surely never reached the log.
        var unstored: HeldDeliveries.Unstored?
        /// Waiting for everything appended to be acknowledged (`drain`).
        var drainWaiters: [CheckedContinuation<Void, Never>] = []
    }

    let namespace: String
    private let node: ClusterNode
    private let subject: String
    /// Makes message ids unique to this leadership: a retried publish is stored once.
    let term: String
    private let state: Mutex<State>
    private let onDurable: @Sendable (UInt64) -> Void
    private let onDeposed: @Sendable (String) -> Void
    /// True while this node surely holds the namespace's lease (`NamespaceLease.isFresh`).
    private let leaseIsFresh: @Sendable () -> Bool
    private let logger: Logger
    private let metrics: ServerMetrics?
    /// How long writes wait, once the lease has lapsed, for a renewal before the log stops
    /// (`watchLease`): a third of the lease time, a renewal's period.
    private let lapseGrace: Duration

    init(
        namespace: String, node: ClusterNode, lastSubjectSequence: UInt64, head: UInt64, durable: UInt64, term: String, logger: Logger,
        metrics: ServerMetrics?,
        leaseIsFresh: @escaping @Sendable () -> Bool,
        onDurable: @escaping @Sendable (UInt64) -> Void, onDeposed: @escaping @Sendable (String) -> Void
    ) {
        self.namespace = namespace
        self.node = node
        self.subject = ClusterNode.logSubject(namespace)
        self.term = term
        self.leaseIsFresh = leaseIsFresh
        self.state = Mutex(State(lastSubjectSequence: lastSubjectSequence, head: head, durable: durable))
        self.onDurable = onDurable
        self.onDeposed = onDeposed
        self.logger = logger
        self.metrics = metrics
        self.lapseGrace = node.configuration.leaseTime / 3
    }

    /// Runs while publishes are under way (`publishPending` starts and cancels it, so an idle
    /// namespace costs nothing): looks at the lease every quarter of `lapseGrace`, at most
    /// every 100 ms.
    private func startWatchdog() -> Task<Void, Never> {
        let grace = lapseGrace
        let tick = min(grace / 4, .milliseconds(100))
        return Task { [weak self] in
            var lapsedSince: ContinuousClock.Instant?
            while !Task.isCancelled {
                try? await Task.sleep(for: tick)
                guard !Task.isCancelled, let self, self.watchLease(grace: grace, lapsedSince: &lapsedSince) else { return }
            }
        }
    }

    /// A leader cut off from NATS (or whose NATS server lost its peers) can neither renew its
    /// lease nor get a batch acknowledged: once its lease has lapsed and stayed lapsed for
    /// `grace` while writes wait (one in flight included), another node may lead by now, so
    /// the log stops and the namespace refuses what it holds, as "may or may not be stored"
    /// (504) since a batch in flight may still land. So an isolated leader answers its held
    /// writes within about the lease time (its last renewal's age, plus `grace`), not after
    /// every retry of its publish. A lapse that heals sooner (the lease bucket electing a leader)
    /// costs nothing. One look, every tick; false once the log stopped.
    private func watchLease(grace: Duration, lapsedSince: inout ContinuousClock.Instant?) -> Bool {
        guard isHealthy else { return false }
        guard state.withLock({ $0.inFlight }), !leaseIsFresh() else {
            lapsedSince = nil
            return true
        }
        let since = lapsedSince ?? ContinuousClock.now
        lapsedSince = since
        guard ContinuousClock.now - since >= grace else { return true }
        stop("the namespace's lease lapsed and could not be renewed within \(grace) while writes waited (cut off from NATS?)")
        return false
    }

    /// False once deposed (or stopped): the namespace then refuses writes.
    var isHealthy: Bool { state.withLock { $0.failure == nil } }

    /// The stream sequence of the namespace's last acknowledged batch (its chain's head), what a
    /// snapshot taken now covers.
    var head: UInt64 { state.withLock { $0.head } }

    /// The record sequence through which the log is durable: set before `onDurable` hears of it.
    var durable: UInt64 { state.withLock { $0.durable } }

    /// Framed record bytes appended since the log was made.
    var appendedBytes: Int { state.withLock { $0.appendedBytes } }

    /// The message id of this term's batch ending with record `last`: JetStream stores a batch
    /// sent again under it once.
    private func messageID(last: UInt64) -> String { "\(term).\(last)" }

    /// Whether this log, in this term, published the message with `headers` (its message id).
    func published(_ headers: NATSHeaders?) -> Bool { headers?["Nats-Msg-Id"]?.hasPrefix("\(term).") == true }

    /// Queues records; their sequence is reported to `onDurable` once JetStream has them.
    func append(_ records: [LogRecord]) {
        guard !records.isEmpty else { return }
        let limit = node.maxBatchBytes
        enqueue { state in
            for record in records {
                if state.pending.last?.isRules != false {
                    state.pending.append(Batch(bytes: [], last: record.sequence, isRules: false))
                }
                var index = state.pending.count - 1
                let before = state.pending[index].bytes.count
                record.encode(into: &state.pending[index].bytes)
                state.appendedBytes += state.pending[index].bytes.count - before
                // A batch must fit in one NATS message: a record that overflows it starts the next.
                if before > 0, state.pending[index].bytes.count > limit {
                    let overflow = Array(state.pending[index].bytes[before...])
                    state.pending[index].bytes.removeSubrange(before...)
                    state.pending.append(Batch(bytes: overflow, last: record.sequence, isRules: false))
                    index += 1
                }
                state.pending[index].last = record.sequence
            }
        }
    }

    /// Queues a change of the namespace's own rules, taking record sequence `sequence` (reported
    /// to `onDurable` like a record's).
    func appendRules(_ source: String, sequence: UInt64) {
        enqueue { $0.pending.append(Batch(bytes: Array(source.utf8), last: sequence, isRules: true)) }
    }

    private func enqueue(_ add: (inout State) -> Void) {
        let start = state.withLock { state -> Bool in
            guard state.failure == nil else { return false }
            add(&state)
            defer { state.inFlight = true }
            return !state.inFlight
        }
        if start { Task { await self.publishPending() } }
    }

    /// Publishes what is pending, one batch at a time, until nothing is left.
    private func publishPending() async {
        let watchdog = startWatchdog()
        defer { watchdog.cancel() }
        while true {
            let next = state.withLock { state -> (batch: Batch, expected: UInt64, head: UInt64)? in
                guard state.failure == nil, !state.pending.isEmpty else {
                    state.inFlight = false
                    return nil
                }
                return (state.pending.removeFirst(), state.lastSubjectSequence, state.head)
            }
            guard let (batch, expected, head) = next else { return resumeDrainWaiters() }
            let options = PublishOptions(messageID: messageID(last: batch.last), expectedLastSubjectSequence: expected)
            var headers = NATSHeaders([(Self.previousHeader, String(head))])
            if batch.isRules { headers.set(Self.rulesHeader, String(batch.last)) }
            var attempt = 0
            while true {
                // Not while the lease may have lapsed (a partition, NATS unreachable for a lease
                // time): another node may lead without having written yet, and the log, still
                // expecting this node's sequence, would take the batch and depose that node. So
                // the batch waits for a renewal, or for the loss of the lease or the watchdog
                // (`watchLease`) to stop the log.
                guard leaseIsFresh() else {
                    guard isHealthy else { return resumeDrainWaiters() }
                    try? await Task.sleep(for: .milliseconds(20))
                    continue
                }
                // Sent only while the log works, and marked sent before it goes: a stop from
                // now on cannot count its records as surely unstored.
                let sending = state.withLock { state -> Bool in
                    guard state.failure == nil else { return false }
                    state.sending = batch.last
                    return true
                }
                guard sending else { return resumeDrainWaiters() }
                do throws(JetStreamError) {
                    let started = ContinuousClock.now
                    var stored: UInt64
                    do throws(JetStreamError) {
                        stored = try await node.jetStream.publish(subject, payload: batch.bytes, headers: headers, options: options).sequence
                    } catch  where error.provesLaterMessage(after: expected) {
                        // A message follows the one this batch expected: an earlier try of this
                        // batch, stored but not acknowledged (the PubAck was lost with a
                        // connection, or a stale stream leader's refusal came first), or another
                        // node's batch. The log tells which; unread, the batch is sent again.
                        switch await follower(of: expected, messageID: options.messageID) {
                        case .this(let sequence):
                            stored = sequence
                        case .another:
                            stop(
                                "another node wrote the namespace's log after the batch this one expected (\(expected); \(error)): deposed",
                                superseded: true)
                            return
                        case nil:
                            throw error
                        }
                    }
                    // Stopped meanwhile (the watchdog): what it held was answered already.
                    guard isHealthy else { return resumeDrainWaiters() }
                    // Acknowledged only in its place: right after the message it expected.
                    guard try await isPlaced(stored, after: expected) else {
                        metrics?.logBreaks(.fork)
                        stop(
                            "another node's batch took this batch's place in the log (both expected \(expected); this one is \(stored) and void): deposed",
                            superseded: true)
                        return
                    }
                    metrics?.clusterPublish.record(duration: ContinuousClock.now - started)
                    state.withLock { state in
                        state.lastSubjectSequence = stored
                        state.head = stored
                        state.durable = max(state.durable, batch.last)
                        state.sending = nil
                    }
                    onDurable(batch.last)
                    break
                } catch {
                    // A lost PubAck, a NATS failover, a later message the log could not be asked
                    // about, or a wrong-last-sequence refusal that proves nothing (10164, which
                    // may be this batch's own first try in flight, or a stale stream leader's
                    // answer): sent again, and the same message id is stored once.
                    attempt += 1
                    guard attempt < 20, isHealthy else {
                        stop("publishing to the log failed: \(error)")
                        return
                    }
                    logger.warning("publish to the cluster log failed; retrying", metadata: ["error": "\(error)", "attempt": "\(attempt)"])
                    try? await Task.sleep(for: .milliseconds(100 * min(attempt, 10)))
                }
            }
        }
    }

    /// Whether the message JetStream stored at `sequence` is the subject's first after
    /// `expected`: always so when nothing at all came between them in the stream, else asked of
    /// the stream (one request).
    private func isPlaced(_ sequence: UInt64, after expected: UInt64) async throws(JetStreamError) -> Bool {
        // Sequences come from the server: compared without arithmetic that could overflow.
        guard sequence > expected else { return false }
        guard sequence - expected > 1 else { return true }
        return try await node.jetStream.nextMessage(stream: ClusterNode.logStream, subject: subject, from: expected + 1).sequence == sequence
    }

    /// Whose message follows stream sequence `expected` on the subject.
    private enum Follower {
        /// This batch's, at this stream sequence.
        case this(UInt64)
        /// Another node's: this batch is not in the log, and cannot be placed in it any more
        /// (a copy a nats-server before 2.11 stores after it is void for every reader).
        case another
    }

    /// The subject's first message after stream sequence `expected`, by its message id: this
    /// batch's (`messageID`) or another's; nil when the stream could not say (no answer, or no
    /// such message in the store of a stale stream leader that answered).
    private func follower(of expected: UInt64, messageID: String?) async -> Follower? {
        guard let messageID, expected < UInt64.max,
            let next = try? await node.jetStream.nextMessage(stream: ClusterNode.logStream, subject: subject, from: expected + 1)
        else { return nil }
        return next.headers?["Nats-Msg-Id"] == messageID ? .this(next.sequence) : .another
    }

    /// Stops the log for good: nothing more is published or reported durable. Tells `onDeposed`
    /// the first time. `superseded`: another node wrote the log, and the batch being published
    /// surely did not reach it (JetStream refused it, or stored it void), so its records are
    /// unstored as well as those not sent yet.
    func stop(_ reason: String, superseded: Bool = false) {
        let first = state.withLock { state -> Bool in
            guard state.failure == nil else { return false }
            state.failure = reason
            state.pending = []
            let lastMaybeStored = superseded ? state.durable : (state.sending ?? state.durable)
            state.unstored = HeldDeliveries.Unstored(from: lastMaybeStored.addingReportingOverflow(1).partialValue, superseded: superseded)
            return true
        }
        guard first else { return }
        logger.error("the namespace stops leading: \(reason)")
        onDeposed(reason)
        resumeDrainWaiters()
    }

    /// Once the log stopped: from which record sequence on nothing reached the log (no batch
    /// JetStream acknowledged or may yet store), so those writes can be made again elsewhere or
    /// refused as not written (`HeldDeliveries.abandon`). Nil while the log works.
    var unstored: HeldDeliveries.Unstored? { state.withLock { $0.unstored } }

    private func resumeDrainWaiters() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.inFlight || state.failure != nil else { return [] }
            defer { state.drainWaiters = [] }
            return state.drainWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until everything appended so far is acknowledged (or the log stopped).
    func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if !state.inFlight || state.failure != nil { return true }
                state.drainWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
