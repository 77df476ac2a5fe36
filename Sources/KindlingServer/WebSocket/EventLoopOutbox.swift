import NIOCore

/// One event loop's side of fan-out. A namespace hands it every frame bound for this loop's
/// connections as one task (not one task per connection), and the loop flushes each connection
/// once per turn however many messages reached it, so a busy connection gets one `writev` for
/// many messages.
final class EventLoopOutbox: Sendable {
    let eventLoop: any EventLoop
    /// Connections written since the last flush, and whether a flush is already queued.
    private let unflushed: NIOLoopBoundBox<[WebSocketSessionHandler]>
    private let flushQueued: NIOLoopBoundBox<Bool>

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
        self.unflushed = NIOLoopBoundBox([], eventLoop: eventLoop)
        self.flushQueued = NIOLoopBoundBox(false, eventLoop: eventLoop)
    }

    /// Writes each connection's frames on the loop, in order; flushes after what is already
    /// queued on the loop has run.
    func deliver(_ deliveries: [(ConnectionOutbound, [ByteBuffer])]) {
        eventLoop.execute { [self] in
            for (connection, frames) in deliveries {
                let handler = connection.handler.value
                if handler.enqueue(frames) { unflushed.value.append(handler) }
            }
            guard !flushQueued.value else { return }
            flushQueued.value = true
            eventLoop.execute { [self] in
                flushQueued.value = false
                let handlers = unflushed.value
                unflushed.value = []
                for handler in handlers { handler.flush() }
            }
        }
    }
}
