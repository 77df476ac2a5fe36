import KindlingCore
import NIOPosix

/// `chat`: pairs of users exchanging pushed messages with child listeners; messages delivered to
/// the buddy per second and send-to-receipt latency.
public enum ChatScenario {
    public static func run(kindling target: BenchTarget, group: MultiThreadedEventLoopGroup, options: ChatOptions) async throws -> ScenarioReport {
        let users = options.pairs * 2
        let recorders = try await PerLoop.make(on: group) { LatencyRecorder() }
        let listening = Countdown(users)
        let finished = Countdown(users)
        let connector = RealtimeConnector(target: target, group: group, namespace: "chat\(UInt32.random(in: 0...UInt32.max))")
        let links = try await ConnectMany.run(count: users) { user in
            let messages = try ChatUser.messagesPath(of: user)
            return try await connector.connect { loop in
                let local = recorders.local(on: loop)
                return ChatUser(
                    user: user, messages: messages, options: options, recorder: local.value, tally: local.tally, listening: listening,
                    finished: finished)
            }
        }
        await listening.wait()
        let window = MeasuredWindow(serverPid: target.pid)
        for link in links { link.start() }
        try await ProgressLine(label: "chat", unit: "messages", enabled: options.progress).show(count: { recorders.completed }) {
            try await WaitFor.count("users finished", reaches: users, stall: options.duration + .seconds(30)) { users - finished.remaining }
        }
        let elapsed = window.elapsed.seconds
        var report = ScenarioReport(scenario: "chat", system: "kindling", parameters: options.parameters)
        window.close(into: &report)
        report.measurements = [
            Measurement("messages delivered/s", Double(recorders.completed) / elapsed, "/s"),
            Measurement("messages delivered", Double(recorders.completed), "messages"),
            Measurement("refused updates", Double(recorders.retried), "updates"),
            Measurement("duration", elapsed, "s"),
        ]
        report.latencies = [LatencySummary(name: "send→buddy", histograms: try await recorders.collect { $0.histogram })]
        for link in links { await link.close() }
        return report
    }
}
