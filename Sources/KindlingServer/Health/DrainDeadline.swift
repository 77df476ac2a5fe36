import Dispatch
import Foundation

/// Bounds the last step of a shutdown, writing and syncing the logs and waiting for snapshots
/// under way, which a slow disk or a large snapshot can draw out: the work runs on a thread of
/// its own, and the shutdown goes on when it ends or when the time is up, whichever comes first
/// (the work is not stopped; the process exits).
enum DrainDeadline {
    /// Runs `work`; returns whether it ended within `limit`.
    static func run(within limit: Duration, _ work: @escaping @Sendable () -> Void) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            // Threads of their own rather than Dispatch's shared pool, whose threads may all be
            // blocked (by the very work waited for, among others): the deadline must pass
            // whatever else the process is doing. The waiting thread wakes at the work's end or
            // at the deadline, so none outlives the shutdown for long.
            let finished = DispatchSemaphore(value: 0)
            Thread {
                work()
                finished.signal()
            }.start()
            let nanoseconds = max(0, min(limit / .nanoseconds(1), 86_400e9))
            Thread {
                continuation.resume(returning: finished.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success)
            }.start()
        }
    }
}
