import KindlingBench
import Testing

@Suite struct ScenarioReportTests {
    @Test func serverCPUPerOperationIsCoresTimesTheWindowOverTheCount() throws {
        var report = ScenarioReport(scenario: "fanout", system: "kindling", parameters: [:])
        report.serverCores = 0.5
        report.addServerCPU(per: 1_000_000, unit: "delivery", elapsed: 4)
        // 0.5 cores for 4 s is 2 s of CPU over a million deliveries: 2,000 ns each.
        let measured = try #require(report.value("server CPU/delivery"))
        #expect(abs(measured - 2_000) < 1e-6)
    }

    @Test func nothingIsAddedWithoutTheServersCPUOrAnyOperation() {
        var unread = ScenarioReport(scenario: "writes", system: "kindling", parameters: [:])
        unread.addServerCPU(per: 10, unit: "write", elapsed: 1)
        #expect(unread.value("server CPU/write") == nil)
        var idle = ScenarioReport(scenario: "writes", system: "kindling", parameters: [:])
        idle.serverCores = 0.1
        idle.addServerCPU(per: 0, unit: "write", elapsed: 1)
        #expect(idle.value("server CPU/write") == nil)
    }
}
