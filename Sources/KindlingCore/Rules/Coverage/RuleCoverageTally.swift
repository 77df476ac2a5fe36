/// The coverage sites one decision evaluated and what each gave, in order, handed to the
/// namespace's `RulesCoverage` when the decision is made. Made for a decision only when coverage
/// is on, so evaluation without it allocates nothing for coverage.
final class RuleCoverageTally {
    private(set) var evaluations: [(site: Int, value: RuleCoverageValue)] = []

    func record(_ site: Int, _ value: RuleCoverageValue) {
        evaluations.append((site, value))
    }
}
