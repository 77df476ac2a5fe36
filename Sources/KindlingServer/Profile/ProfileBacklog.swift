import Synchronization

/// What one profiler stream holds, counted where both its namespace and its event loop see it:
/// records handed to the loop and not yet taken by the socket, and those left out since the
/// reader was last told. A profiler that reads more slowly than records come loses records
/// (counted, then told with a `gap` event), never slows the namespace or grows its memory.
final class ProfileBacklog: Sendable {
    /// The most records a stream may have on their way at once.
    let limit: Int
    private let inFlight = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Takes `count` records on their way, or counts them as dropped (false) when that would
    /// pass the limit. A stream with none on their way takes any batch, so one block of more
    /// operations than the limit (a client's pipelined burst) reaches an idle profiler.
    func admit(_ count: Int) -> Bool {
        let total = inFlight.add(count, ordering: .relaxed).newValue
        if total > limit, total > count {
            inFlight.subtract(count, ordering: .relaxed)
            dropped.add(count, ordering: .relaxed)
            return false
        }
        return true
    }

    /// `count` records are off the stream's hands (written to the socket, or the stream ended).
    func done(_ count: Int) {
        inFlight.subtract(count, ordering: .relaxed)
    }

    /// `count` records on their way were left out after all (the socket was not taking them).
    func drop(_ count: Int) {
        inFlight.subtract(count, ordering: .relaxed)
        dropped.add(count, ordering: .relaxed)
    }

    /// The records left out since the last call.
    func takeDropped() -> Int {
        dropped.exchange(0, ordering: .relaxed)
    }

    /// Records on their way now.
    var count: Int { inFlight.load(ordering: .relaxed) }
}
