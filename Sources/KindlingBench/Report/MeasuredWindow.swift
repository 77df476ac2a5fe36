/// CPU and memory samples of the server and the harness at the start of a measured window, to
/// be closed into a report at its end.
public struct MeasuredWindow: Sendable {
    public let server: ProcessSample
    public let harness: ProcessSample
    private let serverPid: Int32?

    public init(serverPid: Int32?) {
        self.serverPid = serverPid
        server = ProcessSample(pid: serverPid)
        harness = ProcessSample(pid: nil)
    }

    /// The window's length so far.
    public var elapsed: Duration { ContinuousClock.now - harness.taken }

    /// Writes the CPU both sides used and the server's memory into `report`.
    public func close(into report: inout ScenarioReport) {
        let harnessNow = ProcessSample(pid: nil)
        report.harnessCores = harnessNow.cores(since: harness)
        if let serverPid {
            let serverNow = ProcessSample(pid: serverPid)
            report.serverCores = serverNow.cores(since: server)
            report.serverResidentBytes = serverNow.residentBytes
        }
    }
}
