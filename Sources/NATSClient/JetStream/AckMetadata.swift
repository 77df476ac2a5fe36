/// The sequences a push consumer writes into each message's reply subject:
/// `$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>`, or the
/// newer form with a domain and account hash before the stream name (12 tokens or more).
struct AckMetadata: Equatable {
    var streamSequence: UInt64
    var consumerSequence: UInt64
    var pending: UInt64

    init?(replySubject: String) {
        let tokens = replySubject.split(separator: ".", omittingEmptySubsequences: false)
        guard tokens.count >= 9, tokens[0] == "$JS", tokens[1] == "ACK" else { return nil }
        let base = tokens.count == 9 ? 2 : 4
        guard tokens.count >= base + 7,
            let stream = UInt64(tokens[base + 3]),
            let consumer = UInt64(tokens[base + 4]),
            let pending = UInt64(tokens[base + 6])
        else { return nil }
        self.streamSequence = stream
        self.consumerSequence = consumer
        self.pending = pending
    }
}
