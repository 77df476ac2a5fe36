import KindlingCore
import NIOPosix

/// `writes`: M writers on distinct paths, each keeping its pipeline of puts (or SETs) full;
/// acknowledged writes per second and ack latency, with the server's fsync mode as given.
public enum WritesScenario {
    public static func run(kindling target: BenchTarget, group: MultiThreadedEventLoopGroup, options: WritesOptions) async throws -> ScenarioReport {
        try await run(kindling: [target], group: group, options: options)
    }

    /// The same over the nodes of a cluster: writer `i` writes on node `(i / namespaces) mod n`
    /// (`i mod n` with one namespace). The first node opens each namespace first (so it leads a
    /// cluster's new namespace); the writers on the other nodes are forwarded to it. With more
    /// than one namespace, writer `i` writes in namespace `i mod namespaces`.
    public static func run(kindling targets: [BenchTarget], group: MultiThreadedEventLoopGroup, options: WritesOptions) async throws -> ScenarioReport
    {
        let recorders = try await PerLoop.make(on: group) { LatencyRecorder() }
        let finished = Countdown(options.writers)
        let run = UInt32.random(in: 0...UInt32.max)
        let namespaces = try (0..<options.namespaces).map { number in
            try RoundRobinConnector(
                targets: targets, group: group, namespace: options.namespaces == 1 ? options.namespace ?? "writes\(run)" : "writes\(run)n\(number)")
        }
        var primers: [RealtimeLink] = []
        for nodes in namespaces {
            if let primer = try await nodes.primeFirstNode(reading: Path(keys: ["writes"])) { primers.append(primer) }
        }
        let links = try await ConnectMany.run(count: options.writers) { index in
            let nodes = namespaces[index % namespaces.count]
            return try await nodes.node(for: index / namespaces.count).connect { loop in
                let local = recorders.local(on: loop)
                return DurableWriter(
                    wire: KindlingWrites(path: "/writes/w\(index)"), options: options, recorder: local.value, tally: local.tally, finished: finished)
            }
        }
        let window = MeasuredWindow(serverPids: BenchTarget.pids(of: targets))
        for link in links { link.start() }
        var parameters = options.parameters
        if targets.count > 1 { parameters["nodes"] = "\(targets.count)" }
        let report = try await finish(
            window: window, recorders: recorders, finished: finished, options: options, parameters: parameters, system: "kindling")
        for link in links { await link.close() }
        for primer in primers { await primer.close() }
        return report
    }

    public static func run(redis target: BenchTarget, group: MultiThreadedEventLoopGroup, options: WritesOptions) async throws -> ScenarioReport {
        let recorders = try await PerLoop.make(on: group) { LatencyRecorder() }
        let finished = Countdown(options.writers)
        let connector = RedisConnector(target: target, group: group)
        let links = try await ConnectMany.run(count: options.writers) { index in
            try await connector.connect { loop in
                let local = recorders.local(on: loop)
                return DurableWriter(
                    wire: RedisWrites(command: "SET", key: "writes:w\(index)", integerAck: false), options: options, recorder: local.value,
                    tally: local.tally, finished: finished)
            }
        }
        let window = MeasuredWindow(serverPid: target.pid)
        for link in links { link.start() }
        let report = try await finish(
            window: window, recorders: recorders, finished: finished, options: options, parameters: options.parameters, system: "redis")
        for link in links { await link.close() }
        return report
    }

    private static func finish(
        window: MeasuredWindow,
        recorders: PerLoop<LatencyRecorder>,
        finished: Countdown,
        options: WritesOptions,
        parameters: [String: String],
        system: String
    ) async throws -> ScenarioReport {
        try await ProgressLine(label: "writes \(system) \(options.fsync)", unit: "acks", enabled: options.progress).show(count: {
            recorders.completed
        }) {
            try await WaitFor.count("writers finished", reaches: options.writers, stall: options.duration + .seconds(30)) {
                options.writers - finished.remaining
            }
        }
        let elapsed = window.elapsed.seconds
        var report = ScenarioReport(scenario: "writes", system: system, parameters: parameters)
        window.close(into: &report)
        report.measurements = [
            Measurement("acknowledged writes/s", Double(recorders.completed) / elapsed, "/s"),
            Measurement("acknowledged writes", Double(recorders.completed), "writes"),
            Measurement("refused writes", Double(recorders.retried), "writes"),
            Measurement("duration", elapsed, "s"),
        ]
        report.addServerCPU(per: recorders.completed, unit: "write", elapsed: elapsed)
        report.latencies = [LatencySummary(name: "ack", histograms: try await recorders.collect { $0.histogram })]
        return report
    }
}
