import NIOCore

/// The fan-out writer: puts timestamped values on the listened path as the pacer allows,
/// checking every millisecond and on every ack.
final class FanoutWriter: RealtimeBehaviour {
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

    func ready(_ connection: RealtimeConnection) {
        started = MonotonicClock.nanoseconds()
        let bound = NIOLoopBound((self, connection), eventLoop: connection.eventLoop)
        ticker = connection.eventLoop.scheduleRepeatedTask(initialDelay: .zero, delay: .milliseconds(1)) { _ in
            bound.value.0.pump(bound.value.1)
        }
    }

    func received(_ message: ByteBuffer, on connection: RealtimeConnection) {
        guard let response = MessageScan.response(message) else { return }
        response.ok ? acks.complete() : acks.retry()
        pump(connection)
    }

    private func pump(_ connection: RealtimeConnection) {
        let allowed = pacer.allowance(sent: sent, elapsedNanoseconds: MonotonicClock.nanoseconds() &- started, deliveries: deliveries())
        guard allowed > 0 else { return }
        for _ in 0..<allowed {
            sent += 1
            var body: [UInt8] = Array(#"{"p":"/fanout/value","d":"#.utf8)
            body.append(contentsOf: options.value(sequence: sent))
            body.append(UInt8(ascii: "}"))
            connection.request("p", body: body)
        }
        connection.flush()
        if sent >= options.writes {
            ticker?.cancel()
            ticker = nil
        }
    }
}
