import NIOCore

/// Where a namespace sends a connection's messages: through the outbox of the connection's
/// event loop, which writes them in the order the namespace dispatched them.
final class ConnectionOutbound: Sendable {
    let outbox: EventLoopOutbox
    let handler: NIOLoopBound<WebSocketSessionHandler>

    init(outbox: EventLoopOutbox, handler: WebSocketSessionHandler) {
        self.outbox = outbox
        self.handler = NIOLoopBound(handler, eventLoop: outbox.eventLoop)
    }

    /// Closes the connection ("going away", with `reason`), on its event loop.
    func close(reason: String) {
        outbox.eventLoop.execute { self.handler.value.closeGoingAway(reason: reason) }
    }
}
