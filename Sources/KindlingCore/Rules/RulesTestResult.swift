/// The outcome of one case of a `RulesTestSuite`.
public struct RulesTestResult: Sendable, Equatable {
    /// The case's name.
    public let name: String
    /// True when the decision was the expected one.
    public let passed: Bool
    /// What the rules decided (false too when the case's write could not be resolved).
    public let allowed: Bool
    /// What the case expected.
    public let expectedAllowed: Bool
    /// The explain trace: filled for failing cases, and for every case when asked for.
    public let trace: [String]
    /// Set when the case's write is invalid data (not a rules decision at all).
    public let error: String?
}
