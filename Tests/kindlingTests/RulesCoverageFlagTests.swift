import ArgumentParser
import KindlingServer
import Testing

@testable import kindling

/// Whether `kindling serve` records rules coverage: as asked, else in emulator mode only; the
/// banner says so.
struct RulesCoverageFlagTests {
    @Test func onInEmulatorModeUnlessAskedOtherwise() throws {
        let emulator = try SecurityOptions.parse([]).authSettings(host: "127.0.0.1")
        let exposed = try SecurityOptions.parse(["--admin-secret", "0123456789abcdef0123"]).authSettings(host: "0.0.0.0")
        #expect(emulator.emulatorMode && !exposed.emulatorMode)
        #expect(try SecurityOptions.parse([]).recordsCoverage(emulator))
        #expect(try !SecurityOptions.parse([]).recordsCoverage(exposed))
        #expect(try !SecurityOptions.parse(["--no-rules-coverage"]).recordsCoverage(emulator))
        #expect(try SecurityOptions.parse(["--rules-coverage"]).recordsCoverage(exposed))
        let summary = Serve.securitySummary(auth: emulator, rulesFile: nil, allowOpen: false, coverage: true)
        #expect(summary.hasSuffix("\nRules coverage: recorded, at /.inspect/coverage?ns=NAME (kindling rules coverage)"))
        #expect(!Serve.securitySummary(auth: exposed, rulesFile: "r.json", allowOpen: false, coverage: false).contains("coverage"))
    }
}
