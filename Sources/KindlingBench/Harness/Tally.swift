import Synchronization

/// Counts one event loop's progress. Only its loop adds, so the atomics are never contended;
/// the progress line and the pacing writer read them from elsewhere.
public final class Tally: Sendable {
    private let completedCount = Atomic<Int>(0)
    private let retriedCount = Atomic<Int>(0)

    public init() {}

    /// The scenario's main unit: deliveries, acknowledged writes, commits, messages, connections.
    public var completed: Int { completedCount.load(ordering: .relaxed) }
    /// Retries or failures (datastale replies, refused requests).
    public var retried: Int { retriedCount.load(ordering: .relaxed) }

    public func complete(_ count: Int = 1) { completedCount.wrappingAdd(count, ordering: .relaxed) }
    public func retry() { retriedCount.wrappingAdd(1, ordering: .relaxed) }
}
