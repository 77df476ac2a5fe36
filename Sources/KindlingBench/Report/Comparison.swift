/// One figure measured on both servers in the same run, and Kindling's share of Redis's.
public struct Comparison: Codable, Sendable, Equatable {
    public var name: String
    public var kindling: Double
    public var redis: Double
    /// kindling / redis: above 1 means Kindling did more (for rates) or took longer (for latencies).
    public var ratio: Double

    public init(name: String, kindling: Double, redis: Double) {
        self.name = name
        self.kindling = kindling
        self.redis = redis
        ratio = redis == 0 ? 0 : kindling / redis
    }

    /// Pairs the measurement `name` of matching reports.
    public static func pair(_ name: String, kindling: ScenarioReport, redis: ScenarioReport, label: String) -> Comparison? {
        guard let ours = kindling.value(name), let theirs = redis.value(name) else { return nil }
        return Comparison(name: label, kindling: ours, redis: theirs)
    }
}
