import NIOCore

/// Closes the realtime connections of one event loop that have sent nothing for longer than the
/// idle timeout (the SDKs send a keep-alive well within it).
///
/// One timer per event loop rather than one per connection: a timer per connection cost every
/// idle connection about 700 bytes. A silent connection is closed between one and one and a
/// quarter timeouts after its last read.
final class IdleSweep: Sendable {
    private let eventLoop: any EventLoop
    private let timeout: TimeAmount
    private let sessions: NIOLoopBoundBox<[ObjectIdentifier: WebSocketSessionHandler]>
    private let timer: NIOLoopBoundBox<RepeatedTask?>

    init(eventLoop: any EventLoop, timeout: Duration) {
        self.eventLoop = eventLoop
        let parts = timeout.components
        self.timeout = .seconds(parts.seconds) + .nanoseconds(parts.attoseconds / 1_000_000_000)
        self.sessions = NIOLoopBoundBox([:], eventLoop: eventLoop)
        self.timer = NIOLoopBoundBox(nil, eventLoop: eventLoop)
    }

    /// Watches a session (on the event loop).
    func add(_ session: WebSocketSessionHandler) {
        sessions.value[ObjectIdentifier(session)] = session
        guard timer.value == nil else { return }
        let period = TimeAmount.nanoseconds(max(10_000_000, timeout.nanoseconds / 4))
        timer.value = eventLoop.scheduleRepeatedTask(initialDelay: period, delay: period) { [self] _ in sweep() }
    }

    /// Stops watching a session (on the event loop); the timer stops with the last one.
    func remove(_ session: WebSocketSessionHandler) {
        sessions.value[ObjectIdentifier(session)] = nil
        if sessions.value.isEmpty {
            timer.value?.cancel()
            timer.value = nil
        }
    }

    private func sweep() {
        let cutoff = NIODeadline.now() - timeout
        for session in sessions.value.values where session.lastRead < cutoff {
            session.closeIdle()
        }
    }
}
