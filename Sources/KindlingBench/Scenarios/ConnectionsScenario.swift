import KindlingCore
import NIOPosix

/// `connections`: open N idle connections from several loopback source addresses and report
/// the server's resident memory per connection, with a projection past this machine's limits.
public enum ConnectionsScenario {
    public static func run(kindling target: BenchTarget, group: MultiThreadedEventLoopGroup, options: ConnectionsOptions) async throws
        -> ScenarioReport
    {
        try await run(kindling: [target], group: group, options: options)
    }

    /// The same over the nodes of a cluster: connection `i` goes to node `i mod n`, and the
    /// memory figures are the sums over every node.
    public static func run(kindling targets: [BenchTarget], group: MultiThreadedEventLoopGroup, options: ConnectionsOptions) async throws
        -> ScenarioReport
    {
        let tallies = try await PerLoop.make(on: group) { () }
        let nodes = try RoundRobinConnector(targets: targets, group: group, namespace: "idle\(UInt32.random(in: 0...UInt32.max))")
        let pids = BenchTarget.pids(of: targets)
        // One connection to each node first, so the baseline includes the namespace and the servers' warm-up.
        var firsts: [RealtimeLink] = []
        for node in nodes.nodes { firsts.append(try await node.connect { _ in IdleBehaviour() }) }
        try await Task.sleep(for: .milliseconds(500))
        let before = ProcessSample(pids: pids)
        let harnessBefore = ProcessSample(pid: nil)
        let window = MeasuredWindow(serverPids: pids)
        let opened = Countdown(options.count)
        let links = try await ProgressLine(label: "connections", unit: "connections", enabled: options.progress).show(count: { tallies.completed }) {
            try await ConnectMany.run(count: options.count, concurrency: 64) { index in
                let listenPath = options.listen ? try Path("/idle/c\(index)") : nil
                return try await nodes.node(for: index).connect(from: options.source(index)) { loop in
                    IdleClient(listenPath: listenPath, opened: opened, tally: tallies.local(on: loop).tally)
                }
            }
        }
        await opened.wait()
        let elapsed = window.elapsed.seconds
        // Let the server's allocator settle before reading its memory.
        try await Task.sleep(for: .seconds(1))
        let after = ProcessSample(pids: pids)
        let harnessAfter = ProcessSample(pid: nil)
        var parameters = options.parameters
        if targets.count > 1 { parameters["nodes"] = "\(targets.count)" }
        var report = ScenarioReport(scenario: "connections", system: "kindling", parameters: parameters)
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
        for first in firsts { await first.close() }
        return report
    }
}
