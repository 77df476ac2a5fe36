/// One realtime connection's share of a server-wide `InFlightBudget`: the bytes of the message
/// it is receiving in pieces (WebSocket fragments or count-framed pieces), or of its backlog
/// while it is behind. Lives on the connection's event loop.
final class HeldMessageBytes {
    let budget: InFlightBudget
    private var reserved = 0

    init(budget: InFlightBudget) { self.budget = budget }

    /// Makes the connection's share `bytes`; false (share unchanged) when the budget cannot
    /// grow by the difference.
    @discardableResult
    func update(to bytes: Int) -> Bool {
        if bytes > reserved {
            guard budget.reserve(bytes - reserved) else { return false }
        } else {
            budget.release(reserved - bytes)
        }
        reserved = bytes
        return true
    }
}
