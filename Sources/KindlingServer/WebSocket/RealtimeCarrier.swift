import NIOCore

/// What carries one realtime session's messages on an event loop: a WebSocket, or a browser's
/// long-polling requests. The outbox delivers to either the same way; an enum rather than a
/// protocol, so a fan-out's delivery to a WebSocket stays a direct call.
enum RealtimeCarrier {
    case webSocket(WebSocketSessionHandler)
    case longPoll(LongPollConnection)

    /// Takes one encoded frame to send at the next flush; true when the caller must flush it.
    func enqueue(_ frame: ByteBuffer) -> Bool {
        switch self {
        case .webSocket(let handler): handler.enqueue(frame)
        case .longPoll(let connection): connection.enqueue(frame)
        }
    }

    /// Sends what was given since the last flush.
    func flush() {
        switch self {
        case .webSocket(let handler): handler.flush()
        case .longPoll(let connection): connection.flush()
        }
    }

    /// Ends the session with "going away" and `reason` (the server stops, or the client is back
    /// as a new session).
    func closeGoingAway(reason: String) {
        switch self {
        case .webSocket(let handler): handler.closeGoingAway(reason: reason)
        case .longPoll(let connection): connection.close(reason: reason)
        }
    }

    /// The client's address (for the profiler): the WebSocket's peer, or the one that started
    /// the long-polling session.
    var remoteAddress: SocketAddress? {
        switch self {
        case .webSocket(let handler): handler.remoteAddress
        case .longPoll(let connection): connection.remoteAddress
        }
    }

    /// Completes when the session has ended (nil when it cannot be told).
    var closeFuture: EventLoopFuture<Void>? {
        switch self {
        case .webSocket(let handler): handler.closeFuture
        case .longPoll(let connection): connection.ended
        }
    }
}
