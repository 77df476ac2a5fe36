import NIOCore

/// The Redis fan-out writer: PUBLISH of the same values, paced the same way as `FanoutWriter`.
final class RedisFanoutWriter: RedisBehaviour {
    private let options: FanoutOptions
    private let pacer: WritePacer
    private let deliveries: @Sendable () -> Int
    private let acks: Tally
    private var sent = 0
    private var started: UInt64 = 0
    private var ticker: RepeatedTask?

    init(options: FanoutOptions, deliveries: @escaping @Sendable () -> Int, acks: Tally) {
        self.options = options
        pacer = WritePacer(total: options.writes, rate: options.rate, window: options.window, subscribers: options.subscribers)
        self.deliveries = deliveries
        self.acks = acks
    }

    func ready(_ connection: RedisConnection) {
        started = MonotonicClock.nanoseconds()
        let bound = NIOLoopBound((self, connection), eventLoop: connection.eventLoop)
        ticker = connection.eventLoop.scheduleRepeatedTask(initialDelay: .zero, delay: .milliseconds(1)) { _ in
            bound.value.0.pump(bound.value.1)
        }
    }

    func received(_ value: RESPValue, on connection: RedisConnection) {
        if case .integer = value { acks.complete() } else { acks.retry() }
        pump(connection)
    }

    private func pump(_ connection: RedisConnection) {
        let allowed = pacer.allowance(sent: sent, elapsedNanoseconds: MonotonicClock.nanoseconds() &- started, deliveries: deliveries())
        guard allowed > 0 else { return }
        for _ in 0..<allowed {
            sent += 1
            connection.command(Array("PUBLISH".utf8), Array("fanout".utf8), options.value(sequence: sent))
        }
        connection.flush()
        if sent >= options.writes {
            ticker?.cancel()
            ticker = nil
        }
    }
}
