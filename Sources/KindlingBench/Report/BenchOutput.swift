import Foundation

/// The `--json` document: every report of the run and the ratios between them.
public struct BenchOutput: Codable, Sendable {
    public var reports: [ScenarioReport]
    public var comparisons: [Comparison]

    public init(reports: [ScenarioReport], comparisons: [Comparison]) {
        self.reports = reports
        self.comparisons = comparisons
    }

    public func jsonText() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}
