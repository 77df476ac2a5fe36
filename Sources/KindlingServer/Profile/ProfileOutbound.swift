import NIOCore

/// Where a namespace sends one profiler's records: safe to call from any thread; the records
/// are written on the stream's event loop, in the order `send` was called.
final class ProfileOutbound: Sendable {
    private let eventLoop: any EventLoop
    private let stream: NIOLoopBound<ProfileStream>
    private let backlog: ProfileBacklog

    init(eventLoop: any EventLoop, stream: ProfileStream) {
        self.eventLoop = eventLoop
        self.stream = NIOLoopBound(stream, eventLoop: eventLoop)
        self.backlog = stream.backlog
    }

    /// Hands `records` to the stream's loop, or leaves them out (counted) when the stream has as
    /// many on their way as it may: the namespace never waits for a profiler.
    func send(_ records: [ProfileRecord]) {
        guard backlog.admit(records.count) else { return }
        eventLoop.execute { [stream] in stream.value.write(records) }
    }
}
