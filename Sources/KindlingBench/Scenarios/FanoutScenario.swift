import KindlingCore
import NIOPosix

/// `fanout`: N subscribers on one path, one writer; deliveries per second and write-to-delivery
/// latency, against Kindling (listen + put) or Redis (SUBSCRIBE + PUBLISH) with the same values.
public enum FanoutScenario {
    public static func run(kindling target: BenchTarget, group: MultiThreadedEventLoopGroup, options: FanoutOptions) async throws -> ScenarioReport {
        try await run(kindling: [target], group: group, options: options)
    }

    /// The same over the nodes of a cluster: subscriber `i` listens on node `i mod n`, the
    /// writer writes on the first node, and deliveries are counted on every node.
    public static func run(kindling targets: [BenchTarget], group: MultiThreadedEventLoopGroup, options: FanoutOptions) async throws -> ScenarioReport
    {
        let recorders = try await PerLoop.make(on: group) { LatencyRecorder() }
        let listening = Countdown(options.subscribers)
        let nodes = try RoundRobinConnector(targets: targets, group: group, namespace: "fanout\(UInt32.random(in: 0...UInt32.max))")
        let primer = try await nodes.primeFirstNode(reading: Path(keys: ["fanout", "value"]))
        let subscribers = try await ConnectMany.run(count: options.subscribers) { index in
            try await nodes.node(for: index).connect { loop in
                let local = recorders.local(on: loop)
                return FanoutSubscriber(recorder: local.value, tally: local.tally, listening: listening)
            }
        }
        await listening.wait()
        guard recorders.retried == 0 else { throw BenchError.unexpectedReply("\(recorders.retried) listens refused") }
        let acks = Tally()
        let window = MeasuredWindow(serverPids: BenchTarget.pids(of: targets))
        let writer = try await nodes.first.connect { _ in
            FanoutWriter(wire: KindlingWrites(path: "/fanout/value"), options: options, deliveries: { recorders.completed }, acks: acks)
        }
        var parameters = options.parameters
        if targets.count > 1 { parameters["nodes"] = "\(targets.count)" }
        var report = try await finish(window: window, recorders: recorders, options: options, parameters: parameters, system: "kindling")
        report.measurements.append(Measurement("writes acknowledged", Double(acks.completed), "writes"))
        await writer.close()
        for subscriber in subscribers { await subscriber.close() }
        await primer?.close()
        return report
    }

    public static func run(redis target: BenchTarget, group: MultiThreadedEventLoopGroup, options: FanoutOptions) async throws -> ScenarioReport {
        let recorders = try await PerLoop.make(on: group) { LatencyRecorder() }
        let listening = Countdown(options.subscribers)
        let connector = RedisConnector(target: target, group: group)
        let subscribers = try await ConnectMany.run(count: options.subscribers) { _ in
            try await connector.connect { loop in
                let local = recorders.local(on: loop)
                return RedisFanoutSubscriber(recorder: local.value, tally: local.tally, listening: listening)
            }
        }
        await listening.wait()
        let acks = Tally()
        let window = MeasuredWindow(serverPid: target.pid)
        let writer = try await connector.connect { _ in
            FanoutWriter(
                wire: RedisWrites(command: "PUBLISH", key: "fanout", integerAck: true), options: options, deliveries: { recorders.completed },
                acks: acks)
        }
        let report = try await finish(window: window, recorders: recorders, options: options, parameters: options.parameters, system: "redis")
        await writer.close()
        for subscriber in subscribers { await subscriber.close() }
        return report
    }

    private static func finish(
        window: MeasuredWindow,
        recorders: PerLoop<LatencyRecorder>,
        options: FanoutOptions,
        parameters: [String: String],
        system: String
    ) async throws -> ScenarioReport {
        let expected = options.writes * options.subscribers
        try await ProgressLine(label: "fanout \(system)", unit: "deliveries", enabled: options.progress).show(count: { recorders.completed }) {
            try await WaitFor.count("deliveries", reaches: expected) { recorders.completed }
        }
        let elapsed = window.elapsed.seconds
        var report = ScenarioReport(scenario: "fanout", system: system, parameters: parameters)
        window.close(into: &report)
        report.measurements = [
            Measurement("deliveries/s", Double(expected) / elapsed, "/s"),
            Measurement("writes/s", Double(options.writes) / elapsed, "/s"),
            Measurement("deliveries", Double(recorders.completed), "messages"),
            Measurement("duration", elapsed, "s"),
        ]
        report.addServerCPU(per: expected, unit: "delivery", elapsed: elapsed)
        report.latencies = [LatencySummary(name: "write→delivery", histograms: try await recorders.collect { $0.histogram })]
        return report
    }
}
