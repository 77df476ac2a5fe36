/// Why a rules test file could not be used: its JSON, a case's fields, or its rules document.
public struct RulesTestSuiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, naming the case when there is one.
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
