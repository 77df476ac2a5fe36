import Dispatch
import Synchronization

/// Bounds the last step of a shutdown, writing and syncing the logs and waiting for snapshots
/// under way, which a slow disk or a large snapshot can draw out: the work runs on a thread of
/// its own, and the shutdown goes on when it ends or when the time is up, whichever comes first
/// (the work is not stopped; the process exits).
enum DrainDeadline {
    /// Runs `work`; returns whether it ended within `limit`.
    static func run(within limit: Duration, _ work: @escaping @Sendable () -> Void) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let once = ResumeOnce(continuation)
            DispatchQueue.global().async {
                work()
                once.resume(true)
            }
            let nanoseconds = max(0, min(limit / .nanoseconds(1), Double(Int.max / 2)))
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) { once.resume(false) }
        }
    }
}

/// A continuation that the first of two racing callers resumes.
private final class ResumeOnce: Sendable {
    private let continuation: Mutex<CheckedContinuation<Bool, Never>?>

    init(_ continuation: CheckedContinuation<Bool, Never>) { self.continuation = Mutex(continuation) }

    func resume(_ value: Bool) { continuation.withLock { $0.take() }?.resume(returning: value) }
}
