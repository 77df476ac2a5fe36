import KindlingCore
import KindlingProtocol
import NIOCore

/// One student of the study-spot app: listens to the free-seat count of their location, and
/// checks in (count − 1, only when a seat is free) and out (count + 1) by compare-and-set puts
/// carrying the hash of the count last seen, retrying on `datastale` as the SDKs do.
final class SeatStudent: RealtimeBehaviour {
    private let location: Int
    private let pushPath: String
    private let counter: Path
    private let putPrefix: [UInt8]
    private let hashes: [[UInt8]]
    private let ledger: SeatsLedger
    private let tally: Tally
    private let listening: Countdown
    private let finished: Countdown
    private let duration: Duration
    private var listenRequest = 0
    private var known: Int?
    private var holding = false
    private var inFlight: Int?
    private var attemptStarted: UInt64 = 0
    private var staleInARow = 0
    private var waiting = false
    private var over = false
    private var done = false

    init(
        location: Int, counter: Path, options: SeatsOptions, hashes: [[UInt8]], ledger: SeatsLedger, tally: Tally, listening: Countdown,
        finished: Countdown
    ) {
        self.location = location
        self.counter = counter
        let path = counter.description
        pushPath = String(path.dropFirst())
        putPrefix = Array(#"{"p":"\#(path)","d":"#.utf8)
        self.hashes = hashes
        self.ledger = ledger
        self.tally = tally
        self.listening = listening
        self.finished = finished
        duration = options.duration
    }

    func ready(_ connection: RealtimeConnection) {
        listenRequest = connection.listen(at: counter)
        connection.flush()
    }

    func start(_ connection: RealtimeConnection) {
        let bound = NIOLoopBound((self, connection), eventLoop: connection.eventLoop)
        connection.eventLoop.scheduleTask(in: .nanoseconds(Int64(duration.seconds * 1e9))) {
            let (student, connection) = bound.value
            student.over = true
            if student.inFlight == nil { student.attempt(connection) }
        }
        attempt(connection)
    }

    func received(_ message: ByteBuffer, on connection: RealtimeConnection) {
        if let response = MessageScan.response(message) {
            if response.number == listenRequest {
                if !response.ok { tally.retry() }
                listening.arrive()
            } else if response.number == inFlight {
                inFlight = nil
                response.ok ? committed() : stale()
                attempt(connection)
            }
            return
        }
        guard let push = MessageScan.push(message), push.path == pushPath,
            let count = MessageScan.integer(in: message, range: push.data)
        else { return }
        known = count
        if waiting {
            waiting = false
            attempt(connection)
        }
    }

    private func committed() {
        ledger.committed(checkIn: !holding, at: location)
        ledger.latency.record(since: attemptStarted)
        tally.complete()
        holding.toggle()
        attemptStarted = 0
        staleInARow = 0
    }

    private func stale() {
        tally.retry()
        staleInARow += 1
        if staleInARow >= 25 {
            ledger.abandon()
            attemptStarted = 0
            staleInARow = 0
        }
    }

    private func attempt(_ connection: RealtimeConnection) {
        if over {
            if !done {
                done = true
                finished.arrive()
            }
            return
        }
        guard let known else {
            waiting = true
            return
        }
        let next = holding ? known + 1 : known - 1
        // A full location (or a count gone wrong, which the observers report) waits for a change.
        guard next >= 0, next < hashes.count, known < hashes.count else {
            waiting = true
            return
        }
        if attemptStarted == 0 { attemptStarted = MonotonicClock.nanoseconds() }
        var body = putPrefix
        WireLiterals.appendDecimal(next, to: &body)
        body.append(contentsOf: #","h":""#.utf8)
        body.append(contentsOf: hashes[known])
        body.append(contentsOf: #""}"#.utf8)
        inFlight = connection.request("p", body: body)
        connection.flush()
    }
}
