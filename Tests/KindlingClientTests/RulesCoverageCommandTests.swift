import Foundation
import KindlingCore
import KindlingServer
import KindlingTesting
import Testing

/// `kindling rules coverage` against a server recording coverage: the summary, the JSON and HTML
/// reports, `--reset`, and `--min` failing below the threshold and passing once the requests
/// reach every expression, as a CI step would use it.
@Suite(.timeLimit(.minutes(2)))
struct RulesCoverageCommandTests {
    /// Four expressions: `.read`'s rule `auth != null` and its `auth` and `null`, and `.write`'s `false`.
    static let rules = #"{"rules": {".read": "auth != null", ".write": false}}"#

    @Test func theThresholdFailsBelowItAndPassesOnceEveryExpressionRan() async throws {
        guard CommandLineTests.executable != nil else {
            Issue.record("kindling executable not found next to \(CommandLine.arguments[0])")
            return
        }
        try await KindlingTesting.withServer(label: "kindling-coverage-cli-test") { configuration in
            configuration.rules = try RulesDocument.parse(Self.rules)
            configuration.rulesCoverage = true
        } _: { server in
            let url = "http://127.0.0.1:\(server.port)"
            let coverage = { (arguments: [String]) in
                try await CommandLineTests.run(["rules", "coverage", "--url", url, "--ns", "ci"] + arguments)
            }
            // Nothing evaluated yet: 0 of 4, each whole rule listed once.
            let empty = try await coverage(["--min", "90"])
            #expect(empty.status == 3)
            #expect(empty.output.hasPrefix("Rules coverage of namespace ci: 0 of 4 expressions evaluated (0%)"))
            #expect(empty.output.contains("Never evaluated (2):\n  1:22  rules/.read  auth != null\n  1:47  rules/.write  false\n"))
            // A signed-out read: the `.read` rule and its parts, false; `.write` never ran.
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=ci").status == 401)
            let reads = try await coverage(["--min", "90"])
            #expect(reads.status == 3, "3 of 4 is 75%")
            #expect(reads.output.contains("3 of 4 expressions evaluated (75%)"))
            #expect(reads.output.contains("Only one outcome (1):\n  1:22  rules/.read  auth != null  (only false)\n"))
            #expect(try await coverage(["--min", "75"]).status == 0)
            // A write attempt runs `.write`: every expression has run.
            #expect(try await TestHTTPConnection.request(port: server.port, "PUT", "/a.json?ns=ci", body: "1").status == 401)
            let all = try await coverage(["--min", "90"])
            #expect(all.status == 0)
            #expect(all.output.contains("4 of 4 expressions evaluated (100%)") && !all.output.contains("Never evaluated"))
            #expect(all.output.contains("  1:47  rules/.write  false  (only false)\n"))
            // The JSON report and the page; --reset answers what it cleared.
            let page = FileManager.default.temporaryDirectory.appendingPathComponent("coverage-\(UUID().uuidString).html")
            defer { try? FileManager.default.removeItem(at: page) }
            let json = try await coverage(["--json", "--html", page.path, "--reset"])
            #expect(json.status == 0)
            #expect(try JSONParser.parse(json.output)["summary"]?["evaluated"] == .number(4))
            #expect(try String(contentsOf: page, encoding: .utf8).hasPrefix("<!doctype html>"))
            #expect(try await coverage([]).output.contains("0 of 4 expressions evaluated"))
            #expect(try await coverage(["--min", "101"]).status == 64)
        }
        // A server that does not record coverage: refused, with how to turn it on.
        try await KindlingTesting.withServer(label: "kindling-coverage-cli-test") { configuration in
            configuration.rulesCoverage = false
        } _: { server in
            let off = try await CommandLineTests.run(["rules", "coverage", "--url", "http://127.0.0.1:\(server.port)"])
            #expect(off.status == 1)
        }
    }
}
