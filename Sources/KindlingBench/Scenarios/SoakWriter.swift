import KindlingProtocol
import NIOCore

/// A normal realtime client of the soak: writes its send time to its pair's path at a steady
/// pace.
final class SoakWriter: RealtimeBehaviour {
    private let path: String
    private let every: TimeAmount
    private var ticker: RepeatedTask?

    init(path: String, every: Duration) {
        self.path = path
        let parts = every.components
        self.every = .nanoseconds(max(1_000_000, parts.seconds * 1_000_000_000 + parts.attoseconds / 1_000_000_000))
    }

    func ready(_ connection: RealtimeConnection) {
        let bound = NIOLoopBound(connection, eventLoop: connection.eventLoop)
        let path = path
        ticker = connection.eventLoop.scheduleRepeatedTask(initialDelay: every, delay: every) { _ in
            var body = Array(#"{"p":"\#(path)","d":{"sent":"#.utf8)
            WireLiterals.appendDecimal(Int(MonotonicClock.nanoseconds()), to: &body)
            body.append(contentsOf: "}}".utf8)
            bound.value.request("p", body: body)
            bound.value.flush()
        }
    }

    func received(_ message: ByteBuffer, on connection: RealtimeConnection) {}
}
