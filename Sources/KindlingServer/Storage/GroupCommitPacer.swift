/// When the log's next flush starts: at once, or a little later, so that it carries the writes
/// already on their way instead of syncing some of them alone.
///
/// Under steady load from clients that each wait for their last write's acknowledgement, the
/// acknowledgements of one sync go out together and the next writes come back a round trip
/// later. Started by whatever has come back when the log is free, the next flush syncs part of
/// them while the rest gather behind it, and the clients settle into two groups taking turns:
/// about twice the syncs per write that Redis's event loop makes (all of a turn's reads, then
/// one fsync). So a flush that would start within `linger` of the last sync's end, with fewer
/// records queued than the larger of the last two batches held, waits until that many have come
/// or the linger is over, whichever is first. A write alone, a load that has paused, or a queue
/// already as full as the last batches starts at once; only `always` mode waits, the others
/// acknowledge before any sync.
///
/// A value type the log drives under its lock: `queued` when records join the queue,
/// `starting` when a scheduled flush is about to take them, `due` when a wait's timer fires,
/// `taken` and `synced` as the flush goes.
struct GroupCommitPacer: Sendable {
    /// What the log does after queueing records.
    enum Decision: Equatable, Sendable {
        /// Schedule a flush to run at once.
        case flushNow
        /// A flush is already scheduled, or waiting.
        case none
    }

    /// What a scheduled flush does when it runs.
    enum Start: Equatable, Sendable {
        /// Take the queue and write it.
        case take
        /// Take nothing yet: come back after this long (sooner, through `queued`, if the wait
        /// fills), and then only if `due(wait)` says so.
        case wait(Duration, wait: UInt64)
    }

    /// Where the next flush stands.
    enum State: Equatable, Sendable {
        /// None is scheduled.
        case idle
        /// One is scheduled to run at once.
        case scheduled
        /// One waits for `target` records or for its timer.
        case waiting(target: Int)
    }

    /// A batch smaller than this is no sign of load.
    static let loadedBatch = 8
    /// The longest linger after a sync: no acknowledgement is held back longer for company.
    static let longestLinger: Duration = .microseconds(500)
    /// The shortest linger (when the last sync took less): about a loaded round trip.
    static let shortestLinger: Duration = .microseconds(100)

    let waits: Bool
    private(set) var state = State.idle
    private var lastBatch = 0
    private var batchBefore = 0
    private var lastSync: Duration = .zero
    private var lastSynced: ContinuousClock.Instant?
    /// Numbers the waits, so a timer of a wait that has ended does nothing.
    private var waitNumber: UInt64 = 0

    /// `waits` is false in `everysec` and `never` modes.
    init(waits: Bool) {
        self.waits = waits
    }

    /// How long a flush may wait after a sync: the sync's own time, within bounds.
    var linger: Duration { min(Self.longestLinger, max(Self.shortestLinger, lastSync)) }

    /// Records joined the queue, which now holds `count`.
    mutating func queued(count: Int) -> Decision {
        switch state {
        case .scheduled:
            return .none
        case .waiting(let target):
            guard count >= target else { return .none }
            state = .scheduled
            return .flushNow
        case .idle:
            state = .scheduled
            return .flushNow
        }
    }

    /// A scheduled flush is about to run with `count` records queued.
    mutating func starting(count: Int, at now: ContinuousClock.Instant) -> Start {
        let target = max(lastBatch, batchBefore)
        guard waits, target >= Self.loadedBatch, count < target, let lastSynced, now < lastSynced + linger else { return .take }
        state = .waiting(target: target)
        waitNumber &+= 1
        return .wait(lastSynced + linger - now, wait: waitNumber)
    }

    /// The timer of wait number `wait` has fired: true when that wait still holds the flush
    /// back, which is then scheduled to run.
    mutating func due(_ wait: UInt64) -> Bool {
        guard case .waiting = state, wait == waitNumber else { return false }
        state = .scheduled
        return true
    }

    /// A flush took the queue's `count` records.
    mutating func taken(count: Int) {
        state = .idle
        guard count > 0 else { return }
        batchBefore = lastBatch
        lastBatch = count
    }

    /// The batch a flush took is durable; its sync took `sync`.
    mutating func synced(at now: ContinuousClock.Instant, taking sync: Duration) {
        lastSynced = now
        lastSync = sync
    }
}
