import Histogram

/// Latencies of one kind on one event loop, in microseconds, in an HdrHistogram (3 significant
/// digits up to two minutes), so recording is a few instructions and memory stays fixed however
/// long the run.
public final class LatencyRecorder {
    public private(set) var histogram = Histogram<UInt64>(highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: .three)

    public init() {}

    /// Records the time from `start` (a `MonotonicClock` reading) to now.
    public func record(since start: UInt64) {
        record(nanoseconds: MonotonicClock.nanoseconds() &- start)
    }

    public func record(nanoseconds: UInt64) {
        _ = histogram.record(min(max(nanoseconds / 1000, 1), 120_000_000))
    }
}
