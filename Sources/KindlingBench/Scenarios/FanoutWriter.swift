import NIOCore

/// The fan-out writer, for Kindling puts or Redis PUBLISH alike: writes timestamped values as the
/// pacer allows, checking every millisecond and on every ack.
final class FanoutWriter<Wire: WriteWire> {
    private let wire: Wire
    private let options: FanoutOptions
    private let pacer: WritePacer
    private let deliveries: @Sendable () -> Int
    private let acks: Tally
    private var sent = 0
    private var started: UInt64 = 0
    private var ticker: RepeatedTask?

    init(wire: Wire, options: FanoutOptions, deliveries: @escaping @Sendable () -> Int, acks: Tally) {
        self.wire = wire
        self.options = options
        pacer = WritePacer(total: options.writes, rate: options.rate, window: options.window, subscribers: options.subscribers)
        self.deliveries = deliveries
        self.acks = acks
    }

    func ready(_ connection: Wire.Connection) {
        started = MonotonicClock.nanoseconds()
        let bound = NIOLoopBound((self, connection), eventLoop: connection.eventLoop)
        ticker = connection.eventLoop.scheduleRepeatedTask(initialDelay: .zero, delay: .milliseconds(1)) { _ in
            bound.value.0.pump(bound.value.1)
        }
    }

    func received(_ message: Wire.Message, on connection: Wire.Connection) {
        guard let ack = wire.ack(message) else { return }
        ack.ok ? acks.complete() : acks.retry()
        pump(connection)
    }

    private func pump(_ connection: Wire.Connection) {
        let allowed = pacer.allowance(sent: sent, elapsedNanoseconds: MonotonicClock.nanoseconds() &- started, deliveries: deliveries())
        guard allowed > 0 else { return }
        for _ in 0..<allowed {
            sent += 1
            wire.write(on: connection) { options.appendValue(sequence: sent, to: &$0) }
        }
        connection.flush()
        if sent >= options.writes {
            ticker?.cancel()
            ticker = nil
        }
    }
}

extension FanoutWriter: RealtimeBehaviour where Wire == KindlingWrites {}

extension FanoutWriter: RedisBehaviour where Wire == RedisWrites {}
