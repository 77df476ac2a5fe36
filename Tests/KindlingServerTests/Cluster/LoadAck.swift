/// One acknowledged write of a `LoadWriter`: `/log/<writer>-<value>` set to `value`.
struct LoadAck: Sendable {
    let writer: String
    let value: Int
    /// When the attempt that was acknowledged was sent.
    let sent: ContinuousClock.Instant
    /// How many attempts went before it (refused, unanswered, or sent to a node that was gone).
    let repeats: Int
    let acknowledged: ContinuousClock.Instant

    var key: String { "\(writer)-\(value)" }

    /// The value in `key` when it is one of `writer`'s.
    static func value(of key: String, writer: String) -> Int? {
        guard key.hasPrefix(writer + "-") else { return nil }
        return Int(key.dropFirst(writer.count + 1))
    }
}
