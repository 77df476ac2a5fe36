import KindlingCore
import NIOCore

/// Watches every location (one listen on `/seats`) and checks each count it is sent.
final class SeatsObserver: RealtimeBehaviour {
    private let seats: Int
    private let log: SeatsObservationLog
    private let listening: Countdown
    private var listenRequest = 0

    init(options: SeatsOptions, listening: Countdown, log: SeatsObservationLog) {
        seats = options.seats
        self.listening = listening
        self.log = log
    }

    func ready(_ connection: RealtimeConnection) {
        listenRequest = connection.listen(at: Path(keys: ["seats"]))
        connection.flush()
    }

    func received(_ message: ByteBuffer, on connection: RealtimeConnection) {
        if let response = MessageScan.response(message) {
            if response.number == listenRequest { listening.arrive() }
            return
        }
        guard let push = MessageScan.push(message) else { return }
        if push.path == "seats" {
            initial(message, data: push.data)
        } else if let location = SeatsObserver.location(push.path), let count = MessageScan.integer(in: message, range: push.data) {
            seen(count, at: location)
        } else {
            log.update { $0.unreadable += 1 }
        }
    }

    private func initial(_ message: ByteBuffer, data: Range<Int>) {
        let parsed = message.withUnsafeReadableBytes { bytes in try? JSONParser.parse(Array(bytes[data])) }
        log.update { observation in
            for location in observation.last.indices {
                guard let count = parsed?["l\(location)"]?["free"]?.numberValue else { continue }
                observation.last[location] = Int(count)
            }
        }
    }

    private func seen(_ count: Int, at location: Int) {
        log.update { observation in
            guard location < observation.changes.count else {
                observation.unreadable += 1
                return
            }
            if observation.last[location] != count { observation.changes[location] += 1 }
            observation.last[location] = count
            if (count < 0 || count > seats) && observation.outOfRange.count < 10 {
                observation.outOfRange.append("l\(location) seen at \(count)")
            }
        }
    }

    /// The location number in `seats/l<n>/free`.
    static func location(_ path: String) -> Int? {
        let parts = path.split(separator: "/")
        guard parts.count == 3, parts[0] == "seats", parts[2] == "free", parts[1].first == "l" else { return nil }
        return Int(parts[1].dropFirst())
    }
}
