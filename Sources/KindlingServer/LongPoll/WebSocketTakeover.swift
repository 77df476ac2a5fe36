import NIOCore

/// The WebSocket that takes a long-polling session over, as the session (on its own loop)
/// reaches it: each call hops to the WebSocket's loop when the two differ.
struct WebSocketTakeover {
    /// The WebSocket's connection, which tells it from another WebSocket naming the same session.
    let id: ConnectionID
    let eventLoop: any EventLoop
    let handler: NIOLoopBound<WebSocketSessionHandler>

    /// Switch ack: the server is ready to move the session.
    static let switchAck = Array(#"{"t":"c","d":{"t":"a","d":{}}}"#.utf8)

    /// Sends encoded frames, in order.
    func send(_ frames: [ByteBuffer]) {
        let handler = self.handler
        run {
            _ = handler.value.enqueue(frames); handler.value.flush()
        }
    }

    /// Tells the client the upgrade may go ahead.
    func acknowledge() {
        let handler = self.handler
        run { handler.value.write(TextFrame.frames(Self.switchAck)) }
    }

    /// Closes the WebSocket ("going away", with `reason`).
    func close(reason: String) {
        let handler = self.handler
        // Always a task of its own: a WebSocket refused while it joins its pipeline must first
        // finish its upgrade, or its close frame would go out ahead of the upgrade's answer.
        eventLoop.execute { handler.value.closeGoingAway(reason: reason) }
    }

    private func run(_ work: @escaping @Sendable () -> Void) {
        if eventLoop.inEventLoop { work() } else { eventLoop.execute(work) }
    }
}
