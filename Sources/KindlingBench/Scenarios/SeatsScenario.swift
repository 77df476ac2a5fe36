import KindlingCore
import KindlingProtocol
import NIOPosix

/// `seats`: the study-spot app. K students check in and out of S locations by transactions on
/// the free-seat counters while observers watch every location; at the end the invariants are
/// checked against the history and the counts read back.
public enum SeatsScenario {
    public static func run(kindling target: BenchTarget, group: MultiThreadedEventLoopGroup, options: SeatsOptions) async throws -> ScenarioReport {
        let connector = RealtimeConnector(target: target, group: group, namespace: "seats\(UInt32.random(in: 0...UInt32.max))")
        let control = try await connector.connect { _ in IdleBehaviour() }
        let seats = JSONValue.number(Double(options.seats))
        let initial = JSONValue.object(
            (0..<options.locations).map { JSONMember("l\($0)", .object([JSONMember("free", seats), JSONMember("total", seats)])) })
        _ = try await control.callOK(.put(path: Path(keys: ["seats"]), data: initial, hash: nil))

        let listening = Countdown(options.students + options.observers)
        let logs = (0..<options.observers).map { _ in SeatsObservationLog(locations: options.locations) }
        let observers = try await ConnectMany.run(count: options.observers) { index in
            try await connector.connect { _ in SeatsObserver(options: options, listening: listening, log: logs[index]) }
        }
        let ledgers = try await PerLoop.make(on: group) { SeatsLedger(locations: options.locations) }
        let finished = Countdown(options.students)
        let hashes = options.hashes()
        let students = try await ConnectMany.run(count: options.students) { index in
            let location = index % options.locations
            let counter = try Path(SeatsOptions.counterPath(location))
            return try await connector.connect { loop in
                let local = ledgers.local(on: loop)
                return SeatStudent(
                    location: location, counter: counter, options: options, hashes: hashes,
                    ledger: local.value, tally: local.tally, listening: listening, finished: finished
                )
            }
        }
        await listening.wait()

        let window = MeasuredWindow(serverPid: target.pid)
        for student in students { student.start() }
        try await ProgressLine(label: "seats", unit: "commits", enabled: options.progress).show(count: { ledgers.completed }) {
            try await WaitFor.count("students finished", reaches: options.students, stall: options.duration + .seconds(30)) {
                options.students - finished.remaining
            }
        }
        let elapsed = window.elapsed.seconds
        var report = ScenarioReport(scenario: "seats", system: "kindling", parameters: options.parameters)
        window.close(into: &report)

        let history = SeatsHistory(merging: try await ledgers.collect { $0.summary }, locations: options.locations)
        let stored = try await control.callOK(.get(path: Path(keys: ["seats"]), query: .all))
        let final = (0..<options.locations).map { location in stored["l\(location)"]?["free"]?.numberValue.map { Int($0) } }
        let observations = await settle(logs, commits: history.commits)

        report.measurements = [
            Measurement("seat transactions/s", Double(history.commits) / elapsed, "/s"),
            Measurement("committed", Double(history.commits), "transactions"),
            Measurement("datastale retries", Double(ledgers.retried), "replies"),
            Measurement("retries per commit", history.commits == 0 ? 0 : Double(ledgers.retried) / Double(history.commits), ""),
            Measurement("abandoned after 25 retries", Double(history.abandoned), "transactions"),
            Measurement("duration", elapsed, "s"),
        ]
        report.latencies = [LatencySummary(name: "check-in/out (with retries)", histograms: try await ledgers.collect { $0.latency.histogram })]
        report.checks = SeatsVerdict.checks(seats: options.seats, history: history, observations: observations, final: final)
        for link in students + observers + [control] { await link.close() }
        return report
    }

    /// The observers' logs once every change has arrived, or once they stop changing for a second
    /// (changes that never come are what the check reports).
    private static func settle(_ logs: [SeatsObservationLog], commits: Int) async -> [SeatsObservation] {
        var last = logs.map(\.snapshot)
        var quiet = ContinuousClock.now
        while last.contains(where: { $0.changes.reduce(0, +) < commits }), ContinuousClock.now - quiet < .seconds(1) {
            try? await Task.sleep(for: .milliseconds(10))
            let now = logs.map(\.snapshot)
            if now != last { quiet = .now }
            last = now
        }
        return last
    }
}
