import NIOCore

extension TimeAmount {
    /// The same span as a Swift `Duration` (configuration uses `Duration`, NIO timers this).
    init(_ duration: Duration) {
        let parts = duration.components
        self = .seconds(parts.seconds) + .nanoseconds(parts.attoseconds / 1_000_000_000)
    }
}
