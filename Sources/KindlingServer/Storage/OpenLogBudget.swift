import Synchronization

/// How many namespace logs may be open at once, server-wide: opening one more closes the one
/// written least recently (it is opened again at its next write). Without it, writes to many
/// namespaces within the idle timeout would hold a descriptor each until none is left for
/// connections or for the logs themselves.
final class OpenLogBudget: Sendable {
    let limit: Int
    private struct State {
        var open: [ObjectIdentifier: (log: WriteAheadLog, lastUse: UInt64)] = [:]
        var clock: UInt64 = 0
    }
    private let state = Mutex(State())

    /// `limit` logs at most (the server gives them their share of the descriptor limit,
    /// `DescriptorLimit.logs(under:)`).
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// `log` opened its file; returns the log to close to stay within the budget, if any.
    func opened(_ log: WriteAheadLog) -> WriteAheadLog? {
        state.withLock { state in
            state.clock += 1
            state.open[ObjectIdentifier(log)] = (log, state.clock)
            guard state.open.count > limit else { return nil }
            // The least recently used other log (the one just opened is the most recent).
            guard let oldest = state.open.min(by: { $0.value.lastUse < $1.value.lastUse }), oldest.key != ObjectIdentifier(log) else {
                return nil
            }
            state.open[oldest.key] = nil
            return oldest.value.log
        }
    }

    /// `log` was written to.
    func used(_ log: WriteAheadLog) {
        state.withLock { state in
            state.clock += 1
            state.open[ObjectIdentifier(log)]?.lastUse = state.clock
        }
    }

    /// `log` closed its file.
    func closed(_ log: WriteAheadLog) {
        _ = state.withLock { $0.open.removeValue(forKey: ObjectIdentifier(log)) }
    }
}
