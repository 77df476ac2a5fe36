import NIOCore

/// The Redis fan-out subscriber: SUBSCRIBE, then the same latency record per message as
/// `FanoutSubscriber`, read from the same payload.
final class RedisFanoutSubscriber: RedisBehaviour {
    private let recorder: LatencyRecorder
    private let tally: Tally
    private let listening: Countdown

    init(recorder: LatencyRecorder, tally: Tally, listening: Countdown) {
        self.recorder = recorder
        self.tally = tally
        self.listening = listening
    }

    func ready(_ connection: RedisConnection) {
        connection.command(Array("SUBSCRIBE".utf8), Array("fanout".utf8))
        connection.flush()
    }

    func received(_ value: RESPValue, on connection: RedisConnection) {
        guard case .array(let parts?) = value, parts.count == 3, case .bulk(let kind?) = parts[0] else { return }
        if case .bulk(let payload?) = parts[2], kind.readableBytes == 7 {
            if let sent = MessageScan.integer(after: FanoutOptions.timestampKey, in: payload) {
                recorder.record(since: UInt64(sent))
                tally.complete()
            }
        } else if kind.readableBytes == 9 {
            listening.arrive()
        }
    }
}
