import NIOPosix

/// `fanout`: N subscribers on one path, one writer; deliveries per second and write-to-delivery
/// latency, against Kindling (listen + put) or Redis (SUBSCRIBE + PUBLISH) with the same values.
public enum FanoutScenario {
    public static func run(kindling target: BenchTarget, group: MultiThreadedEventLoopGroup, options: FanoutOptions) async throws -> ScenarioReport {
        let recorders = try await PerLoop.make(on: group) { LatencyRecorder() }
        let listening = Countdown(options.subscribers)
        let connector = RealtimeConnector(target: target, group: group, namespace: "fanout\(UInt32.random(in: 0...UInt32.max))")
        let subscribers = try await ConnectMany.run(count: options.subscribers) { _ in
            try await connector.connect { loop in
                let local = recorders.local(on: loop)
                return FanoutSubscriber(recorder: local.value, tally: local.tally, listening: listening)
            }
        }
        await listening.wait()
        guard recorders.retried == 0 else { throw BenchError.unexpectedReply("\(recorders.retried) listens refused") }
        let acks = Tally()
        let window = MeasuredWindow(serverPid: target.pid)
        let writer = try await connector.connect { _ in
            FanoutWriter(wire: KindlingWrites(path: "/fanout/value"), options: options, deliveries: { recorders.completed }, acks: acks)
        }
        var report = try await finish(window: window, recorders: recorders, options: options, system: "kindling")
        report.measurements.append(Measurement("writes acknowledged", Double(acks.completed), "writes"))
        await writer.close()
        for subscriber in subscribers { await subscriber.close() }
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
            FanoutWriter(wire: RedisWrites(command: "PUBLISH", key: "fanout", integerAck: true), options: options, deliveries: { recorders.completed }, acks: acks)
        }
        let report = try await finish(window: window, recorders: recorders, options: options, system: "redis")
        await writer.close()
        for subscriber in subscribers { await subscriber.close() }
        return report
    }

    private static func finish(
        window: MeasuredWindow,
        recorders: PerLoop<LatencyRecorder>,
        options: FanoutOptions,
        system: String
    ) async throws -> ScenarioReport {
        let expected = options.writes * options.subscribers
        try await ProgressLine(label: "fanout \(system)", unit: "deliveries", enabled: options.progress).show(count: { recorders.completed }) {
            try await WaitFor.count("deliveries", reaches: expected) { recorders.completed }
        }
        let elapsed = window.elapsed.seconds
        var report = ScenarioReport(scenario: "fanout", system: system, parameters: options.parameters)
        window.close(into: &report)
        report.measurements = [
            Measurement("deliveries/s", Double(expected) / elapsed, "/s"),
            Measurement("writes/s", Double(options.writes) / elapsed, "/s"),
            Measurement("deliveries", Double(recorders.completed), "messages"),
            Measurement("duration", elapsed, "s"),
        ]
        report.latencies = [LatencySummary(name: "write→delivery", histograms: try await recorders.collect { $0.histogram })]
        return report
    }
}
