import KindlingProtocol
import NIOCore

/// A writes-scenario writer, for Kindling puts or Redis SETs alike: keeps `pipeline` writes of
/// its own path or key in flight until the deadline, recording each ack's latency.
final class DurableWriter<Wire: WriteWire> {
    private let wire: Wire
    private let options: WritesOptions
    private let recorder: LatencyRecorder
    private let tally: Tally
    private let finished: Countdown
    private var clock: InFlightClock
    private var sent = 0
    private var answered = 0
    private var deadline: UInt64 = 0

    init(wire: Wire, options: WritesOptions, recorder: LatencyRecorder, tally: Tally, finished: Countdown) {
        self.wire = wire
        self.options = options
        self.recorder = recorder
        self.tally = tally
        self.finished = finished
        clock = InFlightClock(capacity: options.pipeline)
    }

    func ready(_ connection: Wire.Connection) {}

    func start(_ connection: Wire.Connection) {
        deadline = MonotonicClock.nanoseconds() + UInt64(options.duration.seconds * 1e9)
        for _ in 0..<options.pipeline { send(connection) }
        connection.flush()
    }

    func received(_ message: Wire.Message, on connection: Wire.Connection) {
        guard let ack = wire.ack(message) else { return }
        answered += 1
        recorder.record(since: clock.sentAt(ack.number ?? answered))
        ack.ok ? tally.complete() : tally.retry()
        if MonotonicClock.nanoseconds() < deadline {
            send(connection)
            connection.flush()
        } else if answered == sent {
            finished.arrive()
        }
    }

    private func send(_ connection: Wire.Connection) {
        // The number is known before the write is queued.
        clock.sending(wire.nextNumber(on: connection, sent: sent))
        sent += 1
        wire.write(on: connection) { options.appendValue(sequence: sent, to: &$0) }
    }
}

extension DurableWriter: RealtimeBehaviour where Wire == KindlingWrites {}

extension DurableWriter: RedisBehaviour where Wire == RedisWrites {}
