/// CPU and memory samples of the server and the harness at the start of a measured window, to
/// be closed into a report at its end.
public struct MeasuredWindow: Sendable {
    /// The server's sample: the sum over every node when the run targets several.
    public let server: ProcessSample
    public let harness: ProcessSample
    private let serverPids: [Int32]

    /// A window on one server (nil: not a local process the harness can read).
    public init(serverPid: Int32?) {
        self.init(serverPids: serverPid.map { [$0] } ?? [])
    }

    /// A window on the nodes `serverPids` (empty: none the harness can read); their CPU and
    /// memory are reported as sums.
    public init(serverPids: [Int32]) {
        self.serverPids = serverPids
        server = ProcessSample(pids: serverPids)
        harness = ProcessSample(pid: nil)
    }

    /// The window's length so far.
    public var elapsed: Duration { ContinuousClock.now - harness.taken }

    /// Writes the CPU both sides used and the server's memory into `report`.
    public func close(into report: inout ScenarioReport) {
        let harnessNow = ProcessSample(pid: nil)
        report.harnessCores = harnessNow.cores(since: harness)
        if !serverPids.isEmpty {
            let serverNow = ProcessSample(pids: serverPids)
            report.serverCores = serverNow.cores(since: server)
            report.serverResidentBytes = serverNow.residentBytes
        }
    }
}
