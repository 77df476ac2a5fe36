import NIOCore
import Synchronization

/// Lets a repeated log line through at most once per interval, so a flood of refused
/// connections or accept failures costs one line, not one per event.
final class RateLimitedNotice: Sendable {
    private let interval: TimeAmount
    private let last = Mutex<NIODeadline?>(nil)

    init(every interval: TimeAmount) { self.interval = interval }

    /// True when the line may be logged now.
    func shouldLog() -> Bool {
        let now = NIODeadline.now()
        return last.withLock { last in
            if let previous = last, now - previous < interval { return false }
            last = now
            return true
        }
    }
}
