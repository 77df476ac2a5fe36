import Histogram

/// The percentiles a report shows for one latency, in milliseconds.
public struct LatencySummary: Codable, Sendable, Equatable {
    public var name: String
    public var count: UInt64
    public var p50: Double
    public var p90: Double
    public var p99: Double
    public var p999: Double
    public var max: Double

    /// Merges the per-loop histograms and reads the percentiles.
    public init(name: String, histograms: [Histogram<UInt64>]) {
        var merged = Histogram<UInt64>(highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: .three)
        for histogram in histograms { merged.add(histogram) }
        self.name = name
        count = merged.totalCount
        let empty = merged.totalCount == 0
        func milliseconds(_ microseconds: UInt64) -> Double { empty ? 0 : Double(microseconds) / 1000 }
        p50 = milliseconds(merged.valueAtPercentile(50))
        p90 = milliseconds(merged.valueAtPercentile(90))
        p99 = milliseconds(merged.valueAtPercentile(99))
        p999 = milliseconds(merged.valueAtPercentile(99.9))
        max = milliseconds(merged.max)
    }
}
