/// One property a scenario verifies at the end (such as "no lost update"), and what it found.
public struct InvariantCheck: Codable, Sendable, Equatable {
    public var name: String
    public var passed: Bool
    /// The first violations found, or a short confirmation.
    public var detail: String

    public init(name: String, passed: Bool, detail: String) {
        self.name = name
        self.passed = passed
        self.detail = detail
    }
}
