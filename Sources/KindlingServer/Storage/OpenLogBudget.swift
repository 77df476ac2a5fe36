#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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

    /// `limit` logs at most; nil allows a quarter of the process's descriptor limit (at least 8),
    /// leaving the rest to connections.
    init(limit: Int? = nil) {
        self.limit = max(1, limit ?? OpenLogBudget.quarterOfDescriptorLimit())
    }

    private static func quarterOfDescriptorLimit() -> Int {
        var limits = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits) == 0 else { return 256 }
        // An unlimited soft limit reads as the largest value: the cap below applies.
        return Int(max(8, min(UInt64(limits.rlim_cur) / 4, 1 << 16)))
    }

    /// `log` opened its file; returns the log to close to stay within the budget, if any.
    func opened(_ log: WriteAheadLog) -> WriteAheadLog? {
        state.withLock { state in
            state.clock += 1
            state.open[ObjectIdentifier(log)] = (log, state.clock)
            guard state.open.count > limit else { return nil }
            guard let oldest = state.open.filter({ $0.key != ObjectIdentifier(log) }).min(by: { $0.value.lastUse < $1.value.lastUse }) else {
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

    /// The logs open now (for tests).
    var openCount: Int { state.withLock { $0.open.count } }
}
