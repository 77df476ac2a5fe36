/// Everything one scenario run against one server measured: the figures, latencies, CPU of both
/// sides (so a reader can see whether the harness or the server was the limit) and any checks.
public struct ScenarioReport: Codable, Sendable {
    public var scenario: String
    /// `kindling` or `redis`.
    public var system: String
    /// The parameters that matter for reading the figures (subscribers, fsync mode, …).
    public var parameters: [String: String]
    public var measurements: [Measurement]
    public var latencies: [LatencySummary]
    public var checks: [InvariantCheck]
    /// Cores the server used during the measured window (nil when it is not a local process).
    public var serverCores: Double?
    /// Cores this harness used during the measured window.
    public var harnessCores: Double?
    /// The server's resident memory at the end of the window.
    public var serverResidentBytes: Int?

    public init(scenario: String, system: String, parameters: [String: String]) {
        self.scenario = scenario
        self.system = system
        self.parameters = parameters
        measurements = []
        latencies = []
        checks = []
    }

    /// The value of the measurement called `name`.
    public func value(_ name: String) -> Double? {
        measurements.first { $0.name == name }?.value
    }

    /// The server's CPU time per operation over the window, in nanoseconds, appended as
    /// `server CPU/<unit>` (nil when the server's CPU was not read or nothing was done). The
    /// measure that stays comparable between runs on a shared machine, where rates swing.
    public mutating func addServerCPU(per operations: Int, unit: String, elapsed: Double) {
        guard let cores = serverCores, operations > 0 else { return }
        measurements.append(Measurement("server CPU/\(unit)", cores * elapsed * 1e9 / Double(operations), "ns"))
    }

    /// True when every check passed.
    public var passed: Bool { checks.allSatisfy(\.passed) }
}
