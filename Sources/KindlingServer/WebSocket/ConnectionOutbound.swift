import NIOCore

/// Where a namespace sends a connection's messages: safe to call from any thread; the frames are
/// written on the connection's event loop, in the order `send` was called.
final class ConnectionOutbound: Sendable {
    private let eventLoop: any EventLoop
    private let handler: NIOLoopBound<WebSocketSessionHandler>

    init(eventLoop: any EventLoop, handler: WebSocketSessionHandler) {
        self.eventLoop = eventLoop
        self.handler = NIOLoopBound(handler, eventLoop: eventLoop)
    }

    func send(_ frames: [ByteBuffer]) {
        eventLoop.execute { [handler] in handler.value.write(frames) }
    }
}
