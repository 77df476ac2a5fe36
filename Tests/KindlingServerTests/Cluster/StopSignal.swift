import Synchronization

/// Tells the writers to stop starting new writes, and counts what they have had acknowledged.
final class StopSignal: Sendable {
    private struct State {
        var stopped = false
        var acknowledged: [String: [ContinuousClock.Instant]] = [:]
    }

    private let state = Mutex(State())

    var isSet: Bool { state.withLock { $0.stopped } }

    func set() { state.withLock { $0.stopped = true } }

    func record(_ ack: LoadAck) { state.withLock { $0.acknowledged[ack.writer, default: []].append(ack.acknowledged) } }

    /// True when `writers` writers each had at least `count` writes acknowledged after `instant`.
    func acknowledgedAfter(_ instant: ContinuousClock.Instant, byAll writers: Int, atLeast count: Int) -> Bool {
        state.withLock { state in
            state.acknowledged.count == writers && state.acknowledged.values.allSatisfy { $0.filter { $0 > instant }.count >= count }
        }
    }
}
