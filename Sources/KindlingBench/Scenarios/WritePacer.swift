/// Decides how many writes a fan-out writer may send now: at most `rate` per second since the
/// start (or as fast as allowed when the rate is 0), never more than `total`, and never more than
/// `window` writes ahead of the slowest point the subscribers have all reached, so a flat-out
/// writer measures the server's delivery rate instead of filling its outbound queues.
public struct WritePacer: Sendable {
    public let total: Int
    public let rate: Double
    public let window: Int
    public let subscribers: Int

    public init(total: Int, rate: Double, window: Int, subscribers: Int) {
        self.total = total
        self.rate = rate
        self.window = window
        self.subscribers = subscribers
    }

    /// Writes to send now, given those already sent, the time since the first, and the
    /// deliveries counted so far.
    public func allowance(sent: Int, elapsedNanoseconds: UInt64, deliveries: Int) -> Int {
        var limit = total
        if rate > 0 { limit = min(limit, Int(Double(elapsedNanoseconds) / 1e9 * rate) + 1) }
        let delivered = deliveries / max(subscribers, 1)
        limit = min(limit, delivered + window)
        return max(0, limit - sent)
    }
}
