/// A long-polling realtime session's life, as a value: what the client's requests and the
/// namespace's messages do to it, and what the shell (`LongPollConnection`) must do in turn.
/// No I/O and no clock of its own: times come in as nanoseconds, polls as ticket numbers.
///
/// The transport, as the JS SDK's `BrowserPollConnection` speaks it: the client keeps one
/// request (a "poll") open at a time, two while it has data to send, and sends a new one as soon
/// as one is answered, or after 25 s in any case. The server holds the newest poll until it has
/// messages for the client (or `holdLimit` has passed) and answers an older one at once, so the
/// browser never has more than one request waiting here. Messages go out as numbered packets.
///
/// The upgrade: once long-polling has connected, the SDK opens a WebSocket naming this session
/// (`s=`). The server answers it with `a` (switch ack); when the client's WebSocket is healthy,
/// it sends `a` on the WebSocket and `n` (end of transmission) on long-polling, and from then
/// on sends its requests on the WebSocket. On the WebSocket's `a` the server sends `n` as its
/// last long-polling message and everything after it on the WebSocket (the SDK holds what
/// arrives there until it has read that `n`). Requests that arrive on the WebSocket are held
/// until the client's `n` has come through long-polling, so none overtakes one sent before it.
/// Then the long-polling side is closed.
struct LongPollSessionState {
    enum Phase: Equatable {
        /// Long-polling carries both directions.
        case polling
        /// A WebSocket offered to take over and was sent `a`; long-polling still carries both ways.
        /// The client's `n` may already have come (`inputEnded`): it travels on another
        /// connection than the WebSocket's `a`, so either may arrive first.
        case upgrading(inputEnded: Bool)
        /// The server's messages go over the WebSocket; the client's requests come over
        /// long-polling until its `n` (`inputEnded`), over the WebSocket after it.
        case upgraded(inputEnded: Bool)
        case ended
    }

    /// What the shell must do.
    enum Action: Equatable {
        /// Answer the poll with this ticket with this script (empty: nothing to say yet).
        case answer(poll: Int, script: [UInt8])
        /// Hand these messages of the client to the namespace, in order.
        case receive([[UInt8]])
        /// The client's requests held from the WebSocket may go to the namespace now.
        case releaseWebSocketInputs
        /// End the session: the connection is gone (its onDisconnect writes run).
        case end(reason: String)
    }

    /// The SDK sends a poll at least every 25 s; this long without one, the client has gone.
    static let abandonedAfter: UInt64 = 45_000_000_000
    /// How long a poll is held before it is answered empty (under the SDK's 25 s).
    static let holdLimit: UInt64 = 20_000_000_000
    static let endTransmission = Array(#"{"t":"c","d":{"t":"n","d":{}}}"#.utf8)

    private(set) var phase = Phase.polling
    let callback: String
    private var segments: LongPollSegments
    /// Messages waiting for a poll to carry them, and their bytes.
    private var outgoing: [[UInt8]] = []
    private(set) var outgoingBytes = 0
    private var nextPacket = 0
    /// The poll held open, if any.
    private(set) var heldPoll: Int?
    /// When the last request of the client arrived.
    private var lastRequest: UInt64
    /// The server's `n` went out (in packet `closeAfter`, once known): the long-polling side
    /// closes once the client's `n` has come too.
    private var endSentInPacket: Int?

    init(callback: String, maxMessageBytes: Int, now: UInt64) {
        self.callback = callback
        self.segments = LongPollSegments(maxMessageBytes: maxMessageBytes)
        self.lastRequest = now
    }

    /// The answer to the `start` request: the id and password the client will send with each
    /// poll, and the first packet, holding what was queued (the handshake).
    mutating func started(id: String, password: String) -> [UInt8] {
        let script = LongPollScript.start(callback: callback, id: id, password: password, packet: nextPacket, messages: outgoing)
        nextPacket += 1
        outgoing = []
        outgoingBytes = 0
        return script
    }

    /// Bytes of the client's messages received in part (segments waiting for the rest).
    var partialBytes: Int { segments.heldBytes }

    /// Whether the server's messages go over long-polling now.
    var carriesServerMessages: Bool {
        switch phase {
        case .polling, .upgrading: true
        case .upgraded, .ended: false
        }
    }

    /// Queues a message for the client (sent at the next `flush`).
    mutating func enqueue(_ message: [UInt8]) {
        outgoing.append(message)
        outgoingBytes += message.count
    }

    /// Sends what is queued, if a poll is held to carry it.
    mutating func flush() -> [Action] {
        guard let poll = heldPoll, !outgoing.isEmpty || closesNow else { return [] }
        heldPoll = nil
        return [.answer(poll: poll, script: takePacket())]
    }

    /// A poll arrived, carrying `segments` of the client's messages.
    mutating func poll(_ ticket: Int, segments new: [LongPollSegments.Segment], now: UInt64) -> [Action] {
        lastRequest = now
        var actions: [Action] = []
        if phase == .ended { return [.answer(poll: ticket, script: LongPollScript.close(callback: callback))] }
        if !new.isEmpty {
            do throws(LongPollSegments.Refusal) {
                let messages = try segments.add(new)
                if !messages.isEmpty { actions.append(.receive(messages)) }
            } catch {
                return [.answer(poll: ticket, script: LongPollScript.close(callback: callback))] + end(reason: error.message)
            }
        }
        // One poll held at a time: the one held until now is answered.
        if let older = heldPoll { actions.append(.answer(poll: older, script: takePacket())) }
        heldPoll = ticket
        actions += flush()
        return actions
    }

    /// The client's `n` came over long-polling: it sends nothing more there.
    mutating func clientEndedTransmission() -> [Action] {
        switch phase {
        case .upgrading(inputEnded: false):
            phase = .upgrading(inputEnded: true)
            return []
        case .upgraded(inputEnded: false):
            phase = .upgraded(inputEnded: true)
            return [.releaseWebSocketInputs] + flush()
        default:
            return []
        }
    }

    /// The held poll `ticket` has waited `holdLimit`: answered with what there is (often nothing).
    mutating func holdExpired(_ ticket: Int) -> [Action] {
        guard heldPoll == ticket else { return [] }
        heldPoll = nil
        return [.answer(poll: ticket, script: takePacket())]
    }

    /// The connection that held poll `ticket` closed before it was answered.
    mutating func pollGone(_ ticket: Int) {
        if heldPoll == ticket { heldPoll = nil }
    }

    /// A periodic check: a client that sent no request for `abandonedAfter` has gone. After the
    /// upgrade the WebSocket tells when the client goes; a client whose `n` never came over
    /// long-polling is taken to have sent all it will there.
    mutating func tick(now: UInt64) -> [Action] {
        guard heldPoll == nil, now >= lastRequest, now - lastRequest > Self.abandonedAfter else { return [] }
        switch phase {
        case .polling, .upgrading: return end(reason: "no long-polling request for \(Self.abandonedAfter / 1_000_000_000) s")
        case .upgraded(inputEnded: false): return clientEndedTransmission()
        case .upgraded(inputEnded: true), .ended: return []
        }
    }

    /// A WebSocket names this session to take it over; true when it may (it is then sent `a`).
    mutating func webSocketOffered() -> Bool {
        guard phase == .polling else { return false }
        phase = .upgrading(inputEnded: false)
        return true
    }

    /// The WebSocket sent `a`: the server's `n` is the last message over long-polling.
    mutating func webSocketAcknowledged() -> [Action] {
        guard case .upgrading(let inputEnded) = phase else { return [] }
        enqueue(Self.endTransmission)
        phase = .upgraded(inputEnded: inputEnded)
        return (inputEnded ? [.releaseWebSocketInputs] : []) + flush()
    }

    /// The WebSocket closed: before the switch the session stays on long-polling (the SDK gives
    /// the upgrade up); after it, the session ends with it.
    mutating func webSocketLost() -> [Action] {
        switch phase {
        case .upgrading:
            phase = .polling
            return []
        case .upgraded:
            return end(reason: "the WebSocket that took the session over closed")
        case .polling, .ended:
            return []
        }
    }

    /// The session ends (its client went, or the server closes it): a held poll is answered
    /// with the command that closes the SDK's connection.
    mutating func end(reason: String) -> [Action] {
        guard phase != .ended else { return [] }
        let closesLongPoll = carriesServerMessages
        phase = .ended
        var actions: [Action] = []
        if let poll = heldPoll, closesLongPoll {
            heldPoll = nil
            actions.append(.answer(poll: poll, script: LongPollScript.close(callback: callback)))
        }
        outgoing = []
        outgoingBytes = 0
        return actions + [.end(reason: reason)]
    }

    /// Long-polling is done with once both sides have sent `n`: the next answer closes it.
    private var closesNow: Bool {
        phase == .upgraded(inputEnded: true) && endSentInPacket != nil
    }

    /// The next answer: the queued messages as a packet, and the close command once long-polling
    /// has carried its last message.
    private mutating func takePacket() -> [UInt8] {
        var number = nextPacket
        let messages = outgoing
        if !messages.isEmpty {
            nextPacket += 1
            if messages.last == Self.endTransmission, !carriesServerMessages { endSentInPacket = number }
        } else {
            number = nextPacket - 1
        }
        outgoing = []
        outgoingBytes = 0
        let closeAfter = phase == .upgraded(inputEnded: true) ? endSentInPacket : nil
        return LongPollScript.packet(callback: callback, number: number, messages, closeAfter: closeAfter)
    }
}
