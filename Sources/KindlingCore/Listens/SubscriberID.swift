import Synchronization

/// A subscriber's identity within one process: the server's connections are its subscribers.
///
/// Concrete, and in this module, so `DatabaseState` can be compiled for it here
/// (`@_specialize(exported: true, where Subscriber == SubscriberID)`): called from another module,
/// a generic `DatabaseState` looks its generic metadata up at run time on every write.
public struct SubscriberID: Hashable, Sendable, CustomStringConvertible {
    public let value: Int

    private static let counter = Mutex(0)

    /// The identity numbered `value`; `next()` makes fresh ones, this is for a caller that keeps
    /// its own numbers (a session's id on the wire, a fuzzer, a test).
    public init(value: Int) {
        self.value = value
    }

    /// A fresh, never reused identity.
    public static func next() -> SubscriberID {
        SubscriberID(
            value: counter.withLock { value in
                value += 1
                return value
            })
    }

    public var description: String { "conn-\(value)" }
}
