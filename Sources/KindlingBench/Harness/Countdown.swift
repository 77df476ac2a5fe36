import Synchronization

/// Waits for a number of arrivals from event-loop code (listens acknowledged, connections ready).
public final class Countdown: Sendable {
    private struct State {
        var remaining: Int
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state: Mutex<State>

    public init(_ count: Int) {
        state = Mutex(State(remaining: count, waiter: nil))
    }

    public func arrive() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.remaining -= 1
            guard state.remaining == 0 else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    public var remaining: Int { state.withLock { $0.remaining } }

    /// Returns once every arrival has happened.
    public func wait() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.remaining <= 0 { return true }
                state.waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}
