import KindlingCore
import Testing

@testable import kindling

/// What `kindling rules coverage` reads from a coverage report: the totals, the outermost
/// expressions never evaluated, the boolean ones with one outcome, at lines and columns from 1.
struct RulesCoverageListingTests {
    @Test func listsTheOutermostUnevaluatedAndTheOneOutcomeExpressions() throws {
        let rules = try RulesDocument.parse(
            """
            {"rules": {
              "a": {".read": "auth != null && auth.uid == 'x'"},
              "b": {".read": "now > 0\n    || now < 0"}
            }}
            """, coverage: true)
        var coverage = RulesCoverage(rules)
        #expect(!rules.canRead(try Path("/a"), auth: .null, root: .empty, query: nil, now: 0, coverage: &coverage).allowed)
        let listing = try RulesCoverageListing(json: try #require(coverage).json(namespace: "demo"))
        #expect(listing.namespace == "demo" && listing.expressions == 15 && listing.evaluated == 4 && listing.percent == 26.66)
        #expect(
            listing.unevaluated == [
                .init(line: 2, column: 35, rule: "rules/a/.read", text: "auth.uid == 'x'"),
                .init(line: 3, column: 19, rule: "rules/b/.read", text: "now > 0     || now < 0"),
            ])
        #expect(
            listing.oneOutcome == [
                .init(line: 2, column: 19, rule: "rules/a/.read", text: "auth != null && auth.uid == 'x'", outcome: "only false"),
                .init(line: 2, column: 19, rule: "rules/a/.read", text: "auth != null", outcome: "only false"),
            ])
        #expect(
            listing.text.hasPrefix(
                "Rules coverage of namespace demo: 4 of 15 expressions evaluated (26.66%), 2 of 12 boolean outcomes seen (16.66%)\n"))
    }

    @Test func aReportWithoutItsFieldsIsRefused() {
        #expect(throws: RulesCoverageListing.Malformed.self) { try RulesCoverageListing(json: .object([])) }
        let node = JSONValue.object([JSONMember("text", .string("x")), JSONMember("count", .number(1))])
        let report = JSONValue.object([
            JSONMember(
                "summary",
                .object(["expressions", "evaluated", "percent", "outcomes", "outcomesSeen", "outcomePercent"].map { JSONMember($0, .number(1)) })),
            JSONMember("rules", .array([node])),
        ])
        #expect(throws: RulesCoverageListing.Malformed.self) { try RulesCoverageListing(json: report) }
    }
}
