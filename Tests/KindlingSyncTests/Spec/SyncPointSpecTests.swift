import Foundation
import KindlingTesting
import Testing

@testable import KindlingCore
@testable import KindlingSync

/// The Firebase JS SDK's sync-point conformance scenarios (`syncPointSpec.json`, 112 scenarios),
/// each run at the root and again below `foo/bar/baz`, as the SDK's own test does.
struct SyncPointSpecTests {
    /// `sync-point-spec.json` in the conformance folder (`ConformanceData`: `../shared/conformance`
    /// beside the clone, or `KINDLING_CONFORMANCE_DIR`).
    static var specPath: String { ConformanceData.path("sync-point-spec.json") }

    static func scenarios() throws -> [JSONValue] {
        guard let data = FileManager.default.contents(atPath: specPath) else {
            throw SpecError("cannot read \(specPath)")
        }
        guard case .array(let scenarios) = try JSONParser.parse([UInt8](data)) else {
            throw SpecError("the spec must be an array of scenarios")
        }
        return scenarios
    }

    // Skipped, with the reason, when the conformance data is not there (a clone without
    // ../shared); CI sets KINDLING_REQUIRE_CONFORMANCE=1 so that it fails instead.
    @Test(ConformanceData.enabled(ifPresent: "sync-point-spec.json"))
    func everyScenarioRaisesTheExpectedEvents() throws {
        let scenarios = try SyncPointSpecTests.scenarios()
        var runs = 0
        var failures: [String] = []
        var steps = 0
        var events = 0
        for scenario in scenarios {
            let name = scenario["name"]?.stringValue ?? "?"
            for prefix in [Path.root, try Path("foo/bar/baz")] {
                runs += 1
                var runner = SyncPointSpecRunner(prefix: prefix)
                do {
                    try runner.run(scenario)
                } catch {
                    failures.append("\(name) [at \(prefix)]: \(error)")
                }
                steps += runner.stepCount
                events += runner.eventCount
            }
        }
        let summary =
            "sync-point spec: \(runs - failures.count)/\(runs) runs passed (\(steps) steps, \(events) expected events)"
        print(summary)
        for failure in failures { print("  FAILED \(failure)") }
        #expect(scenarios.count == 112)
        #expect(failures.isEmpty, "\(summary)\n\(failures.joined(separator: "\n"))")
    }
}
