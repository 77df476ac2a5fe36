import KindlingCore
import NIOCore

/// One user of the dive-buddy chat: listens to the conversation's messages (a child listener in
/// the app) and, for every message from the buddy, sends a reply the way the app does: one
/// multi-location update at `/chat` writing the message at `messages/<conversation>/<id>` and
/// its id in both users' `user-messages`, until the deadline. The listener hears just the new
/// message (a merge at its own path), however long the conversation grows.
final class ChatUser: RealtimeBehaviour {
    private let user: Int
    private let buddy: Int
    private let conversation: Int
    private let messages: Path
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

    init(user: Int, messages: Path, options: ChatOptions, recorder: LatencyRecorder, tally: Tally, listening: Countdown, finished: Countdown) {
        self.user = user
        buddy = user ^ 1
        conversation = user / 2
        self.messages = messages
        self.options = options
        self.recorder = recorder
        self.tally = tally
        self.listening = listening
        self.finished = finished
        ownMark = Array(#""from":"u\#(user)""#.utf8)
        text = String(repeating: "a", count: options.textLength)
    }

    /// Where `user`'s conversation keeps its messages (the two buddies share it).
    static func messagesPath(of user: Int) throws(ValidationError) -> Path {
        try Path("/chat/messages/c\(user / 2)")
    }

    func ready(_ connection: RealtimeConnection) {
        listenRequest = connection.listen(at: messages)
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
            MonotonicClock.nanoseconds() < deadline
        else { return }
        recorder.record(since: UInt64(sentAt))
        tally.complete()
        send(connection)
        connection.flush()
    }

    private func send(_ connection: RealtimeConnection) {
        sent += 1
        let id = "u\(user)x\(sent)"
        let now = MonotonicClock.nanoseconds()
        let update =
            #"{"p":"/chat","d":{"messages/c\#(conversation)/\#(id)":{"from":"u\#(user)","text":"\#(text)","ts":\#(now)},"#
            + #""user-messages/u\#(user)/\#(id)":true,"user-messages/u\#(buddy)/\#(id)":true}}"#
        connection.request("m", body: Array(update.utf8))
    }
}
