import KindlingCore
import NIOPosix

/// `connections`: open N idle connections from several loopback source addresses and report
/// the server's resident memory per connection, with a projection past this machine's limits.
public enum ConnectionsScenario {
    public static func run(kindling target: BenchTarget, group: MultiThreadedEventLoopGroup, options: ConnectionsOptions) async throws -> ScenarioReport {
        let tallies = try await PerLoop.make(on: group) { () }
        let connector = RealtimeConnector(target: target, group: group, namespace: "idle\(UInt32.random(in: 0...UInt32.max))")
        // One connection first, so the baseline includes the namespace and the server's warm-up.
        let first = try await connector.connect { _ in IdleBehaviour() }
        try await Task.sleep(for: .milliseconds(500))
        let before = ProcessSample(pid: target.pid)
        let harnessBefore = ProcessSample(pid: nil)
        let window = MeasuredWindow(serverPid: target.pid)
        let opened = Countdown(options.count)
        let links = try await ProgressLine(label: "connections", unit: "connections", enabled: options.progress).show(count: { tallies.completed }) {
            try await ConnectMany.run(count: options.count, concurrency: 64) { index in
                let listenPath = options.listen ? try Path("/idle/c\(index)") : nil
                return try await connector.connect(from: options.source(index)) { loop in
                    IdleClient(listenPath: listenPath, opened: opened, tally: tallies.local(on: loop).tally)
                }
            }
        }
        await opened.wait()
        let elapsed = window.elapsed.seconds
        // Let the server's allocator settle before reading its memory.
        try await Task.sleep(for: .seconds(1))
        let after = ProcessSample(pid: target.pid)
        let harnessAfter = ProcessSample(pid: nil)
        var report = ScenarioReport(scenario: "connections", system: "kindling", parameters: options.parameters)
        window.close(into: &report)
        report.measurements = [
            Measurement("connections open", Double(tallies.completed), "connections"),
            Measurement("refused listens", Double(tallies.retried), "listens"),
            Measurement("connections opened/s", Double(options.count) / elapsed, "/s"),
        ]
        if let start = before.residentBytes, let end = after.residentBytes {
            let perConnection = Double(end - start) / Double(options.count)
            report.measurements += [
                Measurement("server resident before", Double(start) / 1_048_576, "MB"),
                Measurement("server resident with all open", Double(end) / 1_048_576, "MB"),
                Measurement("server memory per connection", perConnection / 1024, "KB"),
                Measurement("projected server resident at 100,000", (Double(start) + perConnection * 100_000) / 1_048_576, "MB"),
                Measurement("projected server resident at 1,000,000", (Double(start) + perConnection * 1_000_000) / 1_048_576, "MB"),
            ]
        }
        if let start = harnessBefore.residentBytes, let end = harnessAfter.residentBytes {
            report.measurements.append(Measurement("harness memory per connection", Double(end - start) / Double(options.count) / 1024, "KB"))
        }
        for link in links { await link.close() }
        await first.close()
        return report
    }
}
