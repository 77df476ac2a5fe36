#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// Compresses the segments namespaces retire into their history, for the whole process, on one
/// thread at the lowest priority, and only for a namespace whose log has been quiet for a
/// second: compressing a busy namespace's log as fast as it is written would cost about as much
/// CPU as writing it (gzip of JSON at level 1 against the log's own work), which a server under
/// load should not pay while the writes go on. Until then the retired segments stay plain (and
/// count, plain, against the history's size limit).
final class HistoryCompressor: Sendable {
    static let shared = HistoryCompressor()

    /// How long a namespace's log must be unchanged before its segments are compressed.
    static let quiet: Duration = .seconds(1)

    private struct Waiting {
        var history: NamespaceHistory
        /// The log's activity at the last look, nil before the first.
        var activity: Int?
    }

    private let state = Mutex<(waiting: [ObjectIdentifier: Waiting], running: Bool)>(([:], false))

    /// Compresses `history`'s plain segments once its log is quiet.
    func enqueue(_ history: NamespaceHistory) {
        let start = state.withLock { state -> Bool in
            state.waiting[ObjectIdentifier(history)] = Waiting(history: history, activity: nil)
            defer { state.running = true }
            return !state.running
        }
        guard start else { return }
        let thread = Thread { [self] in
            #if os(Linux)
            // On Linux a nice value is a thread's own: only this thread yields to the rest.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
            #endif
            run()
        }
        thread.name = "kindling.history.compress"
        thread.start()
    }

    /// Looks at every waiting namespace once per `quiet`: one whose log did not change since the
    /// last look is compressed and leaves the list; the thread ends when the list is empty.
    private func run() {
        while true {
            let ready = state.withLock { state -> [NamespaceHistory]? in
                guard !state.waiting.isEmpty else {
                    state.running = false
                    return nil
                }
                var ready: [NamespaceHistory] = []
                for (key, var waiting) in state.waiting {
                    let now = waiting.history.activity?()
                    if now == nil || now == waiting.activity {
                        ready.append(waiting.history)
                        state.waiting[key] = nil
                    } else {
                        waiting.activity = now
                        state.waiting[key] = waiting
                    }
                }
                return ready
            }
            guard let ready else { return }
            for history in ready { history.compressPlainSegments() }
            Thread.sleep(forTimeInterval: Double(Self.quiet.components.seconds))
        }
    }
}
