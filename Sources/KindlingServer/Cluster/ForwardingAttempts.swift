/// A follower's attempts at a forwarded write: after each, whether to take the leader's answer,
/// send the write again (the same write, with the same id) to whoever leads by then, or give
/// up and tell the client. The shell (`Namespace.forward`) sends, waits and tries to take the
/// lease; this decides, without sockets or clocks of its own.
///
/// Sending again is safe because the write carries an id that every node remembers with the
/// write's record (`RecentWriteIDs`), so the node that leads answers a write already in the log
/// from there instead of applying it twice. Why "not in the log it read" means "never applied":
/// a node leads only after reading the log to its end, and publishes expecting the log's last
/// batch. A batch of the old leader that was not in the log when the new leader read it either
/// lands before the new leader's first batch, which JetStream then refuses (the new leader is
/// deposed, its copy of the write never stored, and the next attempt finds the old batch's id in
/// the log), or never lands at all, refused for naming a last batch that is not the last any more.
/// A write thus gets into the log once, whichever attempt put it there.
struct ForwardingAttempts: Sendable {
    /// How one attempt ended.
    enum Outcome: Sendable {
        /// A leader answered.
        case answered(ForwardedAnswer)
        /// No answer within the attempt's timeout: the leader may have put the write in the log
        /// (it died, hung, was cut off or deposed, or the request was lost on its way).
        case timedOut
        /// NATS says nobody serves the namespace's requests (no leader yet, or it left): nobody
        /// had the write.
        case noResponders
        /// The request failed otherwise (the connection to NATS was lost): it may have reached
        /// the leader.
        case failed
        /// This node led and decided the write, and stopped leading before the log had it: it
        /// may be stored.
        case leftUnconfirmed
        /// This node or the leader asked does not lead (any more): nothing was written.
        case notLeading
        /// A leader committed the write, and this node stopped reading the log before it had
        /// the record (deposed after a moment's lead, or reading the log again): stored, and
        /// answered from its id when sent again.
        case notCommittedHere
    }

    /// What the shell does next.
    enum Decision: Sendable {
        /// Answer the client with the leader's answer.
        case answer(ForwardedAnswer)
        /// Try to take the lease (the existing `takeOver`: only when it is free) and decide here
        /// when that works; otherwise wait `pause` and send again.
        case retry(pause: Duration)
        /// Answer the client with `refusal`: the deadline passed.
        case giveUp(Refusal)
    }

    /// A client waits for a forwarded write at most this long (then `unconfirmed`, 504, when it
    /// may be stored): long enough to ride out a leader's death (its lease) and a NATS election
    /// (4-9 s), short of the 30 s many HTTP clients give up at.
    static let overall: Duration = .seconds(20)

    /// When the attempts end.
    let deadline: ContinuousClock.Instant
    /// How long one attempt waits for its answer: the lease time (a dead leader's lease expires
    /// within it, so the next attempt can take over or reach its successor), at least 1 s (a
    /// live leader under load answers within it) and at most 5 s.
    let attemptTimeout: Duration
    /// True once an attempt may have put the write in the log: giving up is then `unconfirmed`
    /// (504), not `unavailable` (503, which clients resend blindly).
    private(set) var mayBeStored = false
    /// Attempts in a row that ended at once (nobody to ask): the pause before the next doubles.
    private var quickFailures = 0

    init(now: ContinuousClock.Instant, leaseTime: Duration, overall: Duration = ForwardingAttempts.overall) {
        deadline = now + overall
        attemptTimeout = min(max(leaseTime, .seconds(1)), .seconds(5))
    }

    /// The timeout of the attempt starting `now`; nil once the deadline has passed.
    func timeout(now: ContinuousClock.Instant) -> Duration? {
        guard now < deadline else { return nil }
        return min(attemptTimeout, deadline - now)
    }

    /// The answer when the deadline passed before an attempt ended.
    var refusalAtDeadline: Refusal { mayBeStored ? .unconfirmed : .unavailable(Self.noLeader) }

    /// What to do after an attempt ended with `outcome` at `now`.
    mutating func decide(_ outcome: Outcome, now: ContinuousClock.Instant) -> Decision {
        switch outcome {
        case .answered(.refused(.unavailable(let message))) where message == Namespace.notLeading:
            return nobodyDecided(now: now)
        case .answered(.refused(.unconfirmed)):
            // The leader decided the write and was deposed before the log confirmed it (a
            // shutdown, a lease lost, a batch that lost its place): whoever leads next finds
            // the id in the log if the write got there, so sending it again is safe.
            mayBeStored = true
            return nobodyDecided(now: now)
        case .answered(let answer):
            return .answer(answer)
        case .timedOut:
            mayBeStored = true
            quickFailures = 0
            return now < deadline ? .retry(pause: .zero) : .giveUp(.unconfirmed)
        case .failed, .leftUnconfirmed, .notCommittedHere:
            mayBeStored = true
            return nobodyDecided(now: now)
        case .noResponders, .notLeading:
            return nobodyDecided(now: now)
        }
    }

    /// An attempt that ended without a leader's decision, at once: wait a little (50 ms,
    /// doubling to 250 ms, so a lease that lapses is taken within a quarter of a second, at one
    /// request and one lease look-up per pause) for a leader to appear, or give up when that
    /// would pass the deadline.
    private mutating func nobodyDecided(now: ContinuousClock.Instant) -> Decision {
        let pause = min(Duration.milliseconds(50 << min(quickFailures, 3)), .milliseconds(250))
        quickFailures += 1
        guard now + pause < deadline else { return .giveUp(refusalAtDeadline) }
        return .retry(pause: pause)
    }

    static let noLeader = "No cluster node led the namespace within 20 s; nothing was written. Try again."
}
