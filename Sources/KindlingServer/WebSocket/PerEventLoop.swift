import NIOCore
import Synchronization

/// What each event loop of a server shares among its realtime connections: the outbox that
/// batches fan-out, the inbox that batches requests, and the sweep that closes idle
/// connections. Made with the loop's first connection.
final class PerEventLoop: Sendable {
    private let idleTimeout: Duration
    /// The server-wide budget of requests in progress, which parsing realtime requests takes from.
    private let parseBudget: InFlightBudget
    private let shares = Mutex<[ObjectIdentifier: Shares]>([:])

    init(idleTimeout: Duration, parseBudget: InFlightBudget) {
        self.idleTimeout = idleTimeout
        self.parseBudget = parseBudget
    }

    typealias Shares = (outbox: EventLoopOutbox, inbox: EventLoopInbox, idleSweep: IdleSweep)

    /// Closes every realtime connection with "going away" and `reason`, so each SDK learns the
    /// server left on purpose and reconnects (a close without a close frame looks like a
    /// network failure); done when every connection has closed, or after `limit`.
    func closeAll(reason: String, within limit: Duration) async {
        let outboxes = shares.withLock { all in all.values.map(\.outbox) }
        let closing = outboxes.map { $0.closeAll(reason: reason, within: TimeAmount(limit)) }
        for future in closing { try? await future.get() }
    }

    /// The outbox, inbox and idle sweep of `eventLoop`.
    func shares(of eventLoop: any EventLoop) -> Shares {
        shares.withLock { all in
            let key = ObjectIdentifier(eventLoop)
            if let existing = all[key] { return existing }
            let created = (
                EventLoopOutbox(eventLoop: eventLoop), EventLoopInbox(eventLoop: eventLoop, parseBudget: parseBudget),
                IdleSweep(eventLoop: eventLoop, timeout: idleTimeout)
            )
            all[key] = created
            return created
        }
    }
}
