import NIOCore
import Synchronization

/// What each event loop of a server shares among its realtime connections: the outbox that
/// batches fan-out and the sweep that closes idle connections. Made with the loop's first
/// connection.
final class PerEventLoop: Sendable {
    private let idleTimeout: Duration
    private let shares = Mutex<[ObjectIdentifier: (outbox: EventLoopOutbox, idleSweep: IdleSweep)]>([:])

    init(idleTimeout: Duration) { self.idleTimeout = idleTimeout }

    /// The outbox and idle sweep of `eventLoop`.
    func shares(of eventLoop: any EventLoop) -> (outbox: EventLoopOutbox, idleSweep: IdleSweep) {
        shares.withLock { all in
            let key = ObjectIdentifier(eventLoop)
            if let existing = all[key] { return existing }
            let created = (EventLoopOutbox(eventLoop: eventLoop), IdleSweep(eventLoop: eventLoop, timeout: idleTimeout))
            all[key] = created
            return created
        }
    }
}
