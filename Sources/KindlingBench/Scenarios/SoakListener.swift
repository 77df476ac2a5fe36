import KindlingCore
import NIOCore

/// A normal realtime client of the soak: listens on its pair's path and records how long each
/// write took to arrive, from the send time the writer put in the value.
final class SoakListener: RealtimeBehaviour {
    static let sentKey = Array(#""sent":"#.utf8)
    private let path: Path
    private let samples: SoakSamples
    private var keepAlive: RepeatedTask?

    init(path: Path, samples: SoakSamples) {
        self.path = path
        self.samples = samples
    }

    func ready(_ connection: RealtimeConnection) {
        connection.listen(at: path)
        connection.flush()
        // The SDKs' keepalive (a `0` frame), so the server does not take a listener that only
        // receives for a dead connection.
        let bound = NIOLoopBound(connection, eventLoop: connection.eventLoop)
        keepAlive = connection.eventLoop.scheduleRepeatedTask(initialDelay: .seconds(30), delay: .seconds(30)) { _ in
            bound.value.send(message: Array("0".utf8))
            bound.value.flush()
        }
    }

    func received(_ message: ByteBuffer, on connection: RealtimeConnection) {
        guard MessageScan.response(message) == nil, let sent = MessageScan.integer(after: SoakListener.sentKey, in: message), sent > 0 else { return }
        samples.record(MonotonicClock.nanoseconds() &- UInt64(sent))
    }
}
