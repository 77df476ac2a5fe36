import NIOCore
import Synchronization

/// The outbox of each event loop of a server, made when the loop's first connection arrives.
final class EventLoopOutboxes: Sendable {
    private let outboxes = Mutex<[ObjectIdentifier: EventLoopOutbox]>([:])

    /// The outbox of `eventLoop`.
    func outbox(for eventLoop: any EventLoop) -> EventLoopOutbox {
        outboxes.withLock { all in
            let key = ObjectIdentifier(eventLoop)
            if let existing = all[key] { return existing }
            let created = EventLoopOutbox(eventLoop: eventLoop)
            all[key] = created
            return created
        }
    }
}
