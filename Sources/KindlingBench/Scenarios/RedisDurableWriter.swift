import NIOCore

/// The Redis writes-scenario writer: `pipeline` SETs of its own key in flight until the deadline.
/// Redis answers in order, so the send times are a queue.
final class RedisDurableWriter: RedisBehaviour {
    private let key: [UInt8]
    private let options: WritesOptions
    private let recorder: LatencyRecorder
    private let tally: Tally
    private let finished: Countdown
    private var clock: InFlightClock
    private var sent = 0
    private var answered = 0
    private var deadline: UInt64 = 0

    init(index: Int, options: WritesOptions, recorder: LatencyRecorder, tally: Tally, finished: Countdown) {
        key = Array("writes:w\(index)".utf8)
        self.options = options
        self.recorder = recorder
        self.tally = tally
        self.finished = finished
        clock = InFlightClock(capacity: options.pipeline)
    }

    func ready(_ connection: RedisConnection) {}

    func start(_ connection: RedisConnection) {
        deadline = MonotonicClock.nanoseconds() + UInt64(options.duration.seconds * 1e9)
        for _ in 0..<options.pipeline { send(connection) }
        connection.flush()
    }

    func received(_ value: RESPValue, on connection: RedisConnection) {
        answered += 1
        recorder.record(since: clock.sentAt(answered))
        if case .simple = value { tally.complete() } else { tally.retry() }
        if MonotonicClock.nanoseconds() < deadline {
            send(connection)
            connection.flush()
        } else if answered == sent {
            finished.arrive()
        }
    }

    private func send(_ connection: RedisConnection) {
        sent += 1
        clock.sending(sent)
        var value: [UInt8] = []
        MessageScan.appendDecimal(sent, to: &value)
        connection.command(Array("SET".utf8), key, value)
    }
}
