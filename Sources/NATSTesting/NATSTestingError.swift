/// Why a test server could not be started. Tests fail on it rather than skip: CI installs
/// nats-server, so a missing binary is a broken machine, not an optional feature.
public struct NATSTestingError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
