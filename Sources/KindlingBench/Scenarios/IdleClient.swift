import KindlingCore
import NIOCore

/// An idle connection of the connections scenario: after the handshake it may listen on a path
/// of its own, then only keeps the socket open.
final class IdleClient: RealtimeBehaviour {
    private let listenPath: Path?
    private let opened: Countdown
    private let tally: Tally
    private var listenRequest = 0

    init(listenPath: Path?, opened: Countdown, tally: Tally) {
        self.listenPath = listenPath
        self.opened = opened
        self.tally = tally
    }

    func ready(_ connection: RealtimeConnection) {
        guard let listenPath else {
            tally.complete()
            opened.arrive()
            return
        }
        listenRequest = connection.listen(at: listenPath)
        connection.flush()
    }

    func received(_ message: ByteBuffer, on connection: RealtimeConnection) {
        guard let response = MessageScan.response(message), response.number == listenRequest else { return }
        response.ok ? tally.complete() : tally.retry()
        opened.arrive()
    }
}
