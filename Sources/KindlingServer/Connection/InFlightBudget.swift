import Synchronization

/// The bytes of partly received requests (REST bodies, realtime messages in pieces) the whole
/// server holds, against one server-wide limit, so that many connections each within their own
/// limit cannot together exhaust memory. Each connection reserves before it keeps more bytes
/// and releases them once the request is answered or the connection ends.
final class InFlightBudget: Sendable {
    let limit: Int
    private let used = Atomic<Int>(0)

    init(limit: Int) { self.limit = max(0, limit) }

    /// Takes `bytes` from the budget; false (nothing taken) when they do not fit.
    func reserve(_ bytes: Int) -> Bool {
        guard bytes > 0 else { return true }
        var current = used.load(ordering: .relaxed)
        while true {
            guard bytes <= limit - current else { return false }
            let (exchanged, original) = used.compareExchange(expected: current, desired: current + bytes, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Gives back bytes taken by `reserve`.
    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        used.subtract(bytes, ordering: .relaxed)
    }

    /// The bytes held now.
    var inUse: Int { used.load(ordering: .relaxed) }
}
