/// When the next backup is due: the decisions of the backup scheduler, on times given to it
/// (milliseconds since the Unix epoch), so they are tested without a clock or a wait.
///
/// The first backup is due one interval after the newest one already in the directory (at
/// once when that is overdue), so a server restarted more often than its interval still backs
/// up; with none there yet, one interval after the start (a server just started holds what it
/// loaded from its data directory, or, in memory, nothing yet). After a backup the next is due one interval after it started,
/// or at once when it took longer than that; after a failed one, a retry is due after
/// `retryDelay` (or the interval, if shorter). A clock set back by more than an interval is
/// not waited out: the next backup is then due one interval from now.
struct BackupSchedule: Equatable, Sendable {
    /// Where the scheduler is.
    enum State: Equatable, Sendable {
        /// Waiting for the next backup, due at this time.
        case waiting(due: Int64)
        /// A backup is being written; it started at this time.
        case running(started: Int64)
        /// The server is shutting down: no backup starts any more.
        case stopped
    }

    /// What the scheduler does now.
    enum Decision: Equatable, Sendable {
        /// Back every namespace up now (the state is `running`; call `finished` after).
        case backUp
        /// Nothing to do before this time.
        case wait(until: Int64)
        /// Stop scheduling.
        case stop
    }

    /// Milliseconds between backups.
    let interval: Int64
    /// Milliseconds before a failed backup is tried again (when shorter than `interval`).
    let retryDelay: Int64
    private(set) var state: State

    /// Five minutes: a passing failure (a full disk being cleared) does not cost a whole day's
    /// backup with `--backup-every 1d`.
    static let defaultRetryDelay: Int64 = 5 * 60 * 1000

    init(interval: Int64, retryDelay: Int64 = BackupSchedule.defaultRetryDelay, now: Int64, newestBackup: Int64?) {
        self.interval = max(1, interval)
        self.retryDelay = max(1, retryDelay)
        guard let newestBackup else {
            state = .waiting(due: BackupSchedule.adding(now, self.interval))
            return
        }
        // A newest backup "in the future" (a clock set back) waits one interval at most.
        state = .waiting(due: min(max(BackupSchedule.adding(newestBackup, self.interval), now), BackupSchedule.adding(now, self.interval)))
    }

    /// The decision at `now`; `backUp` moves the state to `running`.
    mutating func decide(now: Int64) -> Decision {
        switch state {
        case .stopped:
            return .stop
        case .running(let started):
            return .wait(until: BackupSchedule.adding(started, interval))
        case .waiting(var due):
            if due > BackupSchedule.adding(now, interval) {
                due = BackupSchedule.adding(now, interval)
                state = .waiting(due: due)
            }
            guard now >= due else { return .wait(until: due) }
            state = .running(started: now)
            return .backUp
        }
    }

    /// The backup that `decide` started ended at `now`, every namespace written or not.
    mutating func finished(now: Int64, succeeded: Bool) {
        guard case .running(let started) = state else { return }
        let next = succeeded ? BackupSchedule.adding(started, interval) : BackupSchedule.adding(now, min(interval, retryDelay))
        state = .waiting(due: max(next, now))
    }

    /// No backup starts from now on.
    mutating func stop() { state = .stopped }

    /// `time + duration`, saturating instead of trapping (times come from the clock and file
    /// names; an interval is bounded, but a sum is never trusted).
    static func adding(_ time: Int64, _ duration: Int64) -> Int64 {
        let (sum, overflow) = time.addingReportingOverflow(duration)
        return overflow ? (duration > 0 ? Int64.max : Int64.min) : sum
    }
}
