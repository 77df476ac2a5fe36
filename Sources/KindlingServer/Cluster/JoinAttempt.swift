import Synchronization

/// One attempt to join a namespace's cluster role: it reads the snapshot and the log to their
/// end while the namespace's request queue is suspended, then either joins (leads or follows)
/// or is given up. NATS can leave a read of that catch-up waiting for good (a consumer whose
/// messages never come, seen on a loaded machine after a leader was deposed), and with the
/// queue suspended the namespace would answer nothing until a restart; so an attempt that has
/// not joined within its time expires, is cancelled and tried again.
///
/// Joining and expiring race (the watchdog against the catch-up); whichever comes first wins,
/// so an attempt never joins after it was given up, nor is it cancelled once it joined (a
/// follower's attempt goes on reading the log for as long as it follows).
final class JoinAttempt: Sendable {
    enum Phase: Equatable {
        case catchingUp
        case joined
        case expired
    }

    /// What an attempt given up throws (and the join logs before it tries again).
    struct Expired: Error, CustomStringConvertible {
        var description: String { "reading the namespace's snapshot and log took longer than \(JoinAttempt.timeLimit)" }
    }

    /// How long an attempt may take to catch up before it is given up.
    static let timeLimit: Duration = .seconds(20)

    private let phase = Mutex(Phase.catchingUp)

    var current: Phase { phase.withLock { $0 } }

    /// Called by the catch-up just before it joins: true when it may (the attempt has not
    /// expired), and from then on the attempt can no longer expire.
    func join() -> Bool {
        phase.withLock { phase in
            guard phase == .catchingUp else { return false }
            phase = .joined
            return true
        }
    }

    /// Called by the watchdog when the time is up: true when the attempt had not joined, which
    /// is then given up (the caller cancels it).
    func expire() -> Bool {
        phase.withLock { phase in
            guard phase == .catchingUp else { return false }
            phase = .expired
            return true
        }
    }
}
