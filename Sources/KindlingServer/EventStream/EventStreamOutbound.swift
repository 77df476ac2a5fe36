import NIOCore

/// Where a namespace sends a REST event stream's events: safe to call from any thread; the
/// bytes are written on the stream's event loop, in the order `send` was called.
final class EventStreamOutbound: Sendable {
    private let eventLoop: any EventLoop
    private let stream: NIOLoopBound<EventStream>

    init(eventLoop: any EventLoop, stream: EventStream) {
        self.eventLoop = eventLoop
        self.stream = NIOLoopBound(stream, eventLoop: eventLoop)
    }

    /// Writes `chunks`; `holds` are let go once the socket has taken them.
    func send(_ chunks: [ByteBuffer], holding holds: [BudgetHold] = []) {
        eventLoop.execute { [stream] in stream.value.write(chunks, holding: holds) }
    }

    /// Ends the stream with a last event (`cancel` when read access was lost).
    func end(with last: [UInt8]) {
        eventLoop.execute { [stream] in stream.value.end(with: last) }
    }
}
