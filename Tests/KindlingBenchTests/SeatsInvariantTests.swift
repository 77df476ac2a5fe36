import KindlingBench
import NIOPosix
import Testing

@Suite("seats invariants")
struct SeatsInvariantTests {
    private let options = SeatsOptions(students: 24, locations: 3, seats: 4, observers: 1, duration: .milliseconds(400), progress: false)

    @Test("a correct server passes every check")
    func correctServerPasses() async throws {
        let report = try await withInProcessServer { target in
            try await SeatsScenario.run(kindling: target, group: MultiThreadedEventLoopGroup.singleton, options: options)
        }
        #expect(report.value("committed") ?? 0 > 0)
        #expect(report.checks.count == 3)
        #expect(report.passed, "\(report.checks)")
    }

    @Test("a server that acknowledges updates it loses fails the checks")
    func lostUpdatesAreCaught() async throws {
        let report = try await withInProcessServer { target in
            let proxy = try await LossyProxy.start(upstreamPort: target.port, dropEvery: 7)
            let report = try await SeatsScenario.run(
                kindling: BenchTarget(host: "127.0.0.1", port: proxy.port),
                group: MultiThreadedEventLoopGroup.singleton,
                options: options
            )
            await proxy.stop()
            return report
        }
        #expect(!report.passed)
        let history = try #require(report.checks.first { $0.name == "final counts equal the history" })
        #expect(!history.passed)
        #expect(history.detail.contains("history says"))
    }

    @Test("the verdict names a count out of range and a change nobody committed")
    func verdictFromHistory() {
        let history = SeatsHistory(checkIns: [3, 1], checkOuts: [2, 1], abandoned: 0)
        var observation = SeatsObservation(locations: 2)
        observation.changes = [5, 3]
        observation.outOfRange = ["l1 seen at 5"]
        let checks = SeatsVerdict.checks(seats: 4, history: history, observations: [observation], final: [3, 4])
        #expect(checks.map(\.passed) == [false, true, false])
        #expect(checks[2].detail.contains("observer 0 saw 3 changes of l1, students committed 2"))
    }
}
