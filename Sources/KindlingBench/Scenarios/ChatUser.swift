import NIOCore

/// One user of the dive-buddy chat: listens to the conversation's messages (a child listener in
/// the app) and, for every message from the buddy, pushes a reply the way the app does: the
/// message at `messages/<conversation>/<id>`, then its id in both users' `user-messages`, until
/// the deadline.
///
/// Not one multi-location update at `/chat`: a listener below such an update is sent the whole
/// data at its location (every message of the conversation so far), which would make the
/// payload grow with the run.
final class ChatUser: RealtimeBehaviour {
    private let user: Int
    private let buddy: Int
    private let conversation: Int
    private let options: ChatOptions
    private let recorder: LatencyRecorder
    private let tally: Tally
    private let listening: Countdown
    private let finished: Countdown
    private let ownMark: [UInt8]
    private let text: String
    private var listenRequest = 0
    private var sent = 0
    private var deadline: UInt64 = 0

    init(user: Int, options: ChatOptions, recorder: LatencyRecorder, tally: Tally, listening: Countdown, finished: Countdown) {
        self.user = user
        buddy = user ^ 1
        conversation = user / 2
        self.options = options
        self.recorder = recorder
        self.tally = tally
        self.listening = listening
        self.finished = finished
        ownMark = Array(#""from":"u\#(user)""#.utf8)
        text = String(repeating: "a", count: options.textLength)
    }

    func ready(_ connection: RealtimeConnection) {
        listenRequest = connection.request("q", body: Array(#"{"p":"/chat/messages/c\#(conversation)","h":""}"#.utf8))
        connection.flush()
    }

    func start(_ connection: RealtimeConnection) {
        deadline = MonotonicClock.nanoseconds() + UInt64(options.duration.seconds * 1e9)
        connection.eventLoop.scheduleTask(in: .nanoseconds(Int64(options.duration.seconds * 1e9))) { [finished] in finished.arrive() }
        for _ in 0..<options.window { send(connection) }
        connection.flush()
    }

    func received(_ message: ByteBuffer, on connection: RealtimeConnection) {
        if let response = MessageScan.response(message) {
            if response.number == listenRequest {
                listening.arrive()
            } else if !response.ok {
                tally.retry()
            }
            return
        }
        // Only the buddy's messages, and only until the deadline (later ones are not answered).
        guard !MessageScan.contains(ownMark, in: message),
              let sentAt = MessageScan.integer(after: FanoutOptions.timestampKey, in: message),
              MonotonicClock.nanoseconds() < deadline else { return }
        recorder.record(since: UInt64(sentAt))
        tally.complete()
        send(connection)
        connection.flush()
    }

    private func send(_ connection: RealtimeConnection) {
        sent += 1
        let id = "u\(user)x\(sent)"
        let now = MonotonicClock.nanoseconds()
        let message = #"{"p":"/chat/messages/c\#(conversation)/\#(id)","d":{"from":"u\#(user)","text":"\#(text)","ts":\#(now)}}"#
        connection.request("p", body: Array(message.utf8))
        let index = #"{"p":"/chat/user-messages","d":{"u\#(user)/\#(id)":true,"u\#(buddy)/\#(id)":true}}"#
        connection.request("m", body: Array(index.utf8))
    }
}
