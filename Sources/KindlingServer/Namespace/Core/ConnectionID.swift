import Synchronization

/// A client connection's identity within one server process.
public struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
    public let value: Int

    private static let counter = Mutex(0)

    /// A fresh, never reused identity.
    public static func next() -> ConnectionID {
        ConnectionID(
            value: counter.withLock { value in
                value += 1
                return value
            })
    }

    public var description: String { "conn-\(value)" }
}
