import KindlingCore

/// Identifies one listener callback. The sync tree never calls back: it returns events tagged
/// with this id, and the SDK looks up and runs the callback itself (on whatever actor it likes).
public struct RegistrationID: Sendable, Hashable, CustomStringConvertible {
    public var rawValue: Int

    public init(_ rawValue: Int) { self.rawValue = rawValue }

    public var description: String { "registration \(rawValue)" }
}
