import NIOCore

/// A writes-scenario writer: keeps `pipeline` puts in flight on its own path until the deadline,
/// recording each ack's latency.
final class DurableWriter: RealtimeBehaviour {
    private let body: [UInt8]
    private let options: WritesOptions
    private let recorder: LatencyRecorder
    private let tally: Tally
    private let finished: Countdown
    private var clock: InFlightClock
    private var value = 0
    private var inFlight = 0
    private var deadline: UInt64 = 0

    init(index: Int, options: WritesOptions, recorder: LatencyRecorder, tally: Tally, finished: Countdown) {
        body = Array(#"{"p":"/writes/w\#(index)","d":"#.utf8)
        self.options = options
        self.recorder = recorder
        self.tally = tally
        self.finished = finished
        clock = InFlightClock(capacity: options.pipeline)
    }

    func ready(_ connection: RealtimeConnection) {}

    func start(_ connection: RealtimeConnection) {
        deadline = MonotonicClock.nanoseconds() + UInt64(options.duration.seconds * 1e9)
        for _ in 0..<options.pipeline { send(connection) }
        connection.flush()
    }

    func received(_ message: ByteBuffer, on connection: RealtimeConnection) {
        guard let response = MessageScan.response(message) else { return }
        recorder.record(since: clock.sentAt(response.number))
        response.ok ? tally.complete() : tally.retry()
        inFlight -= 1
        if MonotonicClock.nanoseconds() < deadline {
            send(connection)
            connection.flush()
        } else if inFlight == 0 {
            finished.arrive()
        }
    }

    private func send(_ connection: RealtimeConnection) {
        value += 1
        var request = body
        MessageScan.appendDecimal(value, to: &request)
        request.append(UInt8(ascii: "}"))
        inFlight += 1
        // The number is known before the request is queued: the next one.
        clock.sending(connection.nextRequestNumber)
        connection.request("p", body: request)
    }
}
