import Logging
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
/// the file log's fsync). A refusal of the expected sequence (10071) means another node wrote
/// the subject: this node was deposed. The log then stops for good, and `onDeposed` is told,
/// so the namespace refuses what it holds and stops leading. A batch is sent only while the
/// node surely holds its lease, so an old leader back from a partition cannot get a batch in
/// before a new leader's first one (which the log would then refuse, deposing the new leader).
final class ReplicatedLog: Sendable {
    private struct State {
        /// Framed records waiting for the next publish.
        var pending: [UInt8] = []
        /// The record sequence of the last record in `pending`.
        var pendingLast: UInt64 = 0
        /// True while a publish is on its way.
        var inFlight = false
        /// The stream sequence of the namespace's last stored batch.
        var lastSubjectSequence: UInt64
        /// Why the log stopped; nil while it works.
        var failure: String?
        /// Waiting for everything appended to be acknowledged (`drain`).
        var drainWaiters: [CheckedContinuation<Void, Never>] = []
    }

    let namespace: String
    private let node: ClusterNode
    private let subject: String
    /// Makes message ids unique to this leadership: a retried publish is stored once.
    private let term: String
    private let state: Mutex<State>
    private let onDurable: @Sendable (UInt64) -> Void
    private let onDeposed: @Sendable (String) -> Void
    /// True while this node surely holds the namespace's lease (`NamespaceLease.isFresh`).
    private let leaseIsFresh: @Sendable () -> Bool
    private let logger: Logger
    /// How long a publish waits for a lapsed lease to be renewed before the log stops.
    static let leaseWait: Duration = .seconds(20)

    init(
        namespace: String, node: ClusterNode, lastSubjectSequence: UInt64, term: String, logger: Logger,
        leaseIsFresh: @escaping @Sendable () -> Bool,
        onDurable: @escaping @Sendable (UInt64) -> Void, onDeposed: @escaping @Sendable (String) -> Void
    ) {
        self.namespace = namespace
        self.node = node
        self.subject = ClusterNode.logSubject(namespace)
        self.term = term
        self.leaseIsFresh = leaseIsFresh
        self.state = Mutex(State(lastSubjectSequence: lastSubjectSequence))
        self.onDurable = onDurable
        self.onDeposed = onDeposed
        self.logger = logger
    }

    /// False once deposed (or stopped): the namespace then refuses writes.
    var isHealthy: Bool { state.withLock { $0.failure == nil } }

    /// The stream sequence of the namespace's last acknowledged batch.
    var lastSubjectSequence: UInt64 { state.withLock { $0.lastSubjectSequence } }

    /// Queues records; their sequence is reported to `onDurable` once JetStream has them.
    func append(_ records: [LogRecord]) {
        guard let last = records.last else { return }
        let start = state.withLock { state -> Bool in
            guard state.failure == nil else { return false }
            for record in records { record.encode(into: &state.pending) }
            state.pendingLast = last.sequence
            defer { state.inFlight = true }
            return !state.inFlight
        }
        if start { Task { await self.publishPending() } }
    }

    /// Publishes what is pending, one batch at a time, until nothing is left.
    private func publishPending() async {
        while true {
            let next = state.withLock { state -> (bytes: [UInt8], last: UInt64, expected: UInt64)? in
                guard state.failure == nil, !state.pending.isEmpty else {
                    state.inFlight = false
                    return nil
                }
                defer { state.pending = [] }
                return (state.pending, state.pendingLast, state.lastSubjectSequence)
            }
            guard let next else { return resumeDrainWaiters() }
            let options = PublishOptions(messageID: "\(term).\(next.last)", expectedLastSubjectSequence: next.expected)
            var attempt = 0
            var lapsedSince: ContinuousClock.Instant?
            while true {
                // Not while the lease may have lapsed (a partition, NATS unreachable for a lease
                // time): another node may lead without having written yet, and the log, still
                // expecting this node's sequence, would take the batch and depose that node. So
                // the batch waits for a renewal, or for the loss of the lease (`stop`).
                guard leaseIsFresh() else {
                    let since = lapsedSince ?? ContinuousClock.now
                    lapsedSince = since
                    guard isHealthy else { return resumeDrainWaiters() }
                    guard ContinuousClock.now - since < Self.leaseWait else {
                        stop("the namespace's lease could not be renewed for \(Self.leaseWait)")
                        return
                    }
                    try? await Task.sleep(for: .milliseconds(20))
                    continue
                }
                lapsedSince = nil
                do {
                    let ack = try await node.jetStream.publish(subject, payload: next.bytes, options: options)
                    state.withLock { $0.lastSubjectSequence = ack.sequence }
                    onDurable(next.last)
                    break
                } catch {
                    if error.isWrongLastSequence {
                        stop("another node wrote the namespace's log (a stale expected sequence \(next.expected)): deposed")
                        return
                    }
                    // A lost PubAck or a NATS failover: the same message id is stored once.
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

    /// Stops the log for good: nothing more is published or reported durable. Tells `onDeposed`
    /// the first time.
    func stop(_ reason: String) {
        let first = state.withLock { state -> Bool in
            guard state.failure == nil else { return false }
            state.failure = reason
            state.pending = []
            return true
        }
        guard first else { return }
        logger.error("the namespace stops leading: \(reason)")
        onDeposed(reason)
        resumeDrainWaiters()
    }

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
