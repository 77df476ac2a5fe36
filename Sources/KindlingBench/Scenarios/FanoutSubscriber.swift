import KindlingCore
import NIOCore

/// A fan-out subscriber: listens on the path, then records the write-to-delivery latency of
/// every push from the timestamp in it.
final class FanoutSubscriber: RealtimeBehaviour {
    private let recorder: LatencyRecorder
    private let tally: Tally
    private let listening: Countdown
    private var listenRequest = 0

    init(recorder: LatencyRecorder, tally: Tally, listening: Countdown) {
        self.recorder = recorder
        self.tally = tally
        self.listening = listening
    }

    func ready(_ connection: RealtimeConnection) {
        listenRequest = connection.listen(at: Path(keys: ["fanout", "value"]))
        connection.flush()
    }

    func received(_ message: ByteBuffer, on connection: RealtimeConnection) {
        if let response = MessageScan.response(message) {
            if response.number == listenRequest {
                if !response.ok { tally.retry() }
                listening.arrive()
            }
            return
        }
        if let sent = MessageScan.integer(after: FanoutOptions.timestampKey, in: message) {
            recorder.record(since: UInt64(sent))
            tally.complete()
        }
    }
}
