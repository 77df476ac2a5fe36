import NIOCore

/// The WebSocket that takes a long-polling session over, as the session (on its own loop)
/// reaches it: each call hops to the WebSocket's loop when the two differ.
struct WebSocketTakeover {
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
        run { handler.value.closeGoingAway(reason: reason) }
    }

    private func run(_ work: @escaping @Sendable () -> Void) {
        if eventLoop.inEventLoop { work() } else { eventLoop.execute(work) }
    }
}
