/// Rules coverage of one namespace: for every expression and sub-expression of the rules in
/// force (`RuleCoverageSite`), how many times it was evaluated and which values it gave, since the
/// rules were put in force or last reset.
///
/// Filled by `RulesDocument.canRead`/`canWrite` given one (`coverage:`), from a document loaded
/// for coverage. A value, kept by the namespace beside its rules and replaced with them.
///
/// Memory is bounded: each expression keeps its first `maxValuesPerExpression` distinct values
/// (later new ones are only counted, in `otherValues`), and all of them together at most
/// `maxStoredBytes`.
public struct RulesCoverage: Sendable {
    /// One value an expression gave and how many times.
    public struct ValueCount: Sendable, Equatable {
        public let value: RuleCoverageValue
        public internal(set) var count: Int
    }

    /// What one expression did.
    public struct Counts: Sendable, Equatable {
        /// Times it was evaluated (its values' counts and `otherValues` add up to this).
        public internal(set) var evaluations = 0
        /// Its distinct values, in the order they first came.
        public internal(set) var values: [ValueCount] = []
        /// Evaluations whose value was not kept: the expression already had
        /// `maxValuesPerExpression` distinct ones, or the report was at `maxStoredBytes`.
        public internal(set) var otherValues = 0

        /// How many times it gave `value`.
        public func count(of value: RuleCoverageValue) -> Int {
            values.first { $0.value == value }?.count ?? 0
        }
    }

    public static let maxValuesPerExpression = 20
    public static let maxStoredBytes = 8 << 20

    /// The document's expressions, numbered as the document's probes number them.
    public let sites: [RuleCoverageSite]
    /// What each of `sites` did, by the same number.
    public private(set) var counts: [Counts]
    private var storedBytes = 0

    /// Empty coverage of `document`; nil when it was not loaded for coverage.
    public init?(_ document: RulesDocument) {
        guard let sites = document.coverageSites else { return nil }
        self.sites = sites
        counts = Array(repeating: Counts(), count: sites.count)
    }

    /// Everything back to never evaluated.
    public mutating func reset() {
        counts = Array(repeating: Counts(), count: sites.count)
        storedBytes = 0
    }

    /// Adds one decision's evaluations.
    mutating func absorb(_ tally: RuleCoverageTally) {
        for (site, value) in tally.evaluations where site < counts.count { record(site, value) }
    }

    private mutating func record(_ site: Int, _ value: RuleCoverageValue) {
        counts[site].evaluations += 1
        if let index = counts[site].values.firstIndex(where: { $0.value == value }) {
            counts[site].values[index].count += 1
            return
        }
        let bytes = value.storedBytes
        guard counts[site].values.count < RulesCoverage.maxValuesPerExpression, storedBytes + bytes <= RulesCoverage.maxStoredBytes else {
            counts[site].otherValues += 1
            return
        }
        storedBytes += bytes
        counts[site].values.append(ValueCount(value: value, count: 1))
    }

    /// The totals a report and a threshold look at.
    public var summary: RulesCoverageSummary {
        var summary = RulesCoverageSummary(expressions: sites.count, evaluated: 0, booleans: 0, outcomesSeen: 0)
        for (site, counts) in zip(sites, counts) {
            if counts.evaluations > 0 { summary.evaluated += 1 }
            guard site.isBoolean else { continue }
            summary.booleans += 1
            if counts.count(of: .bool(true)) > 0 { summary.outcomesSeen += 1 }
            if counts.count(of: .bool(false)) > 0 { summary.outcomesSeen += 1 }
        }
        return summary
    }

    /// The expressions never evaluated whose whole was (or that are a whole rule), in document
    /// order: where a report points first, each standing for its unevaluated parts too.
    public var unevaluated: [Int] {
        sites.indices.filter { index in
            counts[index].evaluations == 0 && (sites[index].parent.map { counts[$0].evaluations > 0 } ?? true)
        }.sorted { sites[$0].start < sites[$1].start }
    }

    /// The boolean expressions evaluated that never gave `true` or never gave `false`, in
    /// document order.
    public var oneOutcome: [Int] {
        sites.indices.filter { index in
            sites[index].isBoolean && counts[index].evaluations > 0
                && (counts[index].count(of: .bool(true)) == 0 || counts[index].count(of: .bool(false)) == 0)
        }.sorted { sites[$0].start < sites[$1].start }
    }

    /// The sites that are parts of each site (by their start in the document), and the whole
    /// rules (the roots) in document order.
    public var tree: (roots: [Int], parts: [[Int]]) {
        var parts = Array(repeating: [Int](), count: sites.count)
        var roots: [Int] = []
        for (index, site) in sites.enumerated() {
            if let parent = site.parent, parent < sites.count { parts[parent].append(index) } else { roots.append(index) }
        }
        let byStart = { (lhs: Int, rhs: Int) in (self.sites[lhs].start, lhs) < (self.sites[rhs].start, rhs) }
        return (roots.sorted(by: byStart), parts.map { $0.sorted(by: byStart) })
    }
}

/// A coverage report's totals.
public struct RulesCoverageSummary: Sendable, Equatable {
    /// Expressions and sub-expressions in the rules.
    public var expressions: Int
    /// Those evaluated at least once.
    public var evaluated: Int
    /// Expressions typed boolean: each has two outcomes, `true` and `false`.
    public var booleans: Int
    /// Outcomes of the boolean expressions that happened at least once.
    public var outcomesSeen: Int

    public init(expressions: Int, evaluated: Int, booleans: Int, outcomesSeen: Int) {
        self.expressions = expressions
        self.evaluated = evaluated
        self.booleans = booleans
        self.outcomesSeen = outcomesSeen
    }

    /// `evaluated` in percent of `expressions` (100 when there are none).
    public var percent: Double { RulesCoverageSummary.percent(evaluated, of: expressions) }

    /// `outcomesSeen` in percent of the outcomes there are (100 when there are none).
    public var outcomePercent: Double { RulesCoverageSummary.percent(outcomesSeen, of: 2 * booleans) }

    /// `part` in percent of `whole`, to two decimals, rounded down (so a threshold is never
    /// passed by rounding).
    static func percent(_ part: Int, of whole: Int) -> Double {
        guard whole > 0 else { return 100 }
        return (Double(part) * 10_000 / Double(whole)).rounded(.down) / 100
    }
}
