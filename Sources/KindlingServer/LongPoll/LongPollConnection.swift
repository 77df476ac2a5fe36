import KindlingCore
import KindlingProtocol
import Logging
import NIOCore

/// One long-polling realtime session, on the event loop that took its `start` request: the shell
/// around `LongPollSessionState` that does what it says. To the namespace it is a realtime
/// connection like a WebSocket one (same attach, rules, limits, onDisconnect, `ls`), reached
/// through its slot in the loop's outbox. The HTTP requests that carry it may come on any loop;
/// `LongPollSession` hops them here.
final class LongPollConnection {
    let connection = ConnectionID.next()
    let session: SessionID
    let password: String
    let namespace: Namespace
    private let eventLoop: any EventLoop
    private let outbox: EventLoopOutbox
    private let inbox: EventLoopInbox
    private let verifier: CredentialVerifier
    private let metrics: ServerMetrics
    private let logger: Logger
    private let maxPendingBytes: Int
    private let registry: LongPollSessions
    private var state: LongPollSessionState
    private var slot: SessionSlot?
    private var responders: [Int: LongPollResponder] = [:]
    private var holdTimer: Scheduled<Void>?
    private var tick: RepeatedTask?
    /// The server's messages the session holds (queued for a poll, or received in pieces),
    /// counted against the server-wide budget of bytes waiting for slow readers.
    private let backlog: HeldMessageBytes
    /// The client's messages received in part, counted against the server-wide budget of
    /// requests in progress (`--max-unfinished-mb`), as a WebSocket's partial messages are.
    private let partial: HeldMessageBytes
    /// A message the namespace sent in pieces (count-framed): the pieces still due, and those read.
    private var pieces: (due: Int, collected: [UInt8])?
    private var takeover: WebSocketTakeover?
    /// Frames for the WebSocket that took the session over, until the next flush.
    private var forwarded: [ByteBuffer] = []
    /// The client's requests that came over the WebSocket before its `n` came over long-polling.
    private var heldWebSocketInputs: [(inputs: [SessionInput], parsed: Int)] = []
    private var heldWebSocketRequests = 0
    private let endedPromise: EventLoopPromise<Void>
    private var counted: ConnectionTransport?
    /// The address of the client that started the session (for the profiler).
    private(set) var remoteAddress: SocketAddress?

    init(
        namespace: Namespace, callback: String, eventLoop: any EventLoop, shares: PerEventLoop.Shares, registry: LongPollSessions,
        resources: ServerResources, configuration: ServerConfiguration
    ) {
        self.namespace = namespace
        self.eventLoop = eventLoop
        self.outbox = shares.outbox
        self.inbox = shares.inbox
        self.verifier = resources.verifier
        self.metrics = resources.metrics
        self.logger = configuration.logger
        self.maxPendingBytes = configuration.maxPendingOutboundBytes
        self.registry = registry
        self.backlog = HeldMessageBytes(budget: resources.backlogBudget)
        self.partial = HeldMessageBytes(budget: resources.budget)
        self.session = SessionID(connection: connection)
        self.password = LongPollConnection.randomPassword()
        self.state = LongPollSessionState(
            callback: callback, maxMessageBytes: configuration.maxMessageBytes, now: NIODeadline.now().uptimeNanoseconds)
        self.endedPromise = eventLoop.makePromise(of: Void.self)
    }

    /// The connection's id as the client sends it with every request (the handshake's session id).
    var id: String { session.description }

    /// Completes when the session has ended.
    var ended: EventLoopFuture<Void> { endedPromise.futureResult }

    /// Lets go of a session that was never started (no room for it).
    func discard() {
        endedPromise.succeed()
    }

    private var metadata: Logger.Metadata { ["connection": "\(connection)", "namespace": "\(namespace.name)", "transport": "longpoll"] }

    /// Attaches the session to its namespace and returns the answer to `start`, which came
    /// from `remote`.
    func start(host: String, replacing last: SessionID?, remote: SocketAddress?) -> [UInt8] {
        let slot = outbox.add(.longPoll(self))
        self.slot = slot
        remoteAddress = remote
        metrics.connectionOpened(.longpoll)
        counted = .longpoll
        namespace.attach(
            connection, session: session, replacing: last, outbound: ConnectionOutbound(outbox: outbox, slot: slot),
            remote: namespace.profiledAddress(remote))
        state.enqueue(ServerMessage.handshake(timestamp: Namespace.now(), host: host, session: session.description))
        let period = TimeAmount.seconds(5)
        // The task runs on this connection's loop, which `NIOLoopBound` has the compiler hold it to.
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        tick = eventLoop.scheduleRepeatedTask(initialDelay: period, delay: period) { _ in
            let connection = bound.value
            connection.perform(connection.state.tick(now: NIODeadline.now().uptimeNanoseconds))
        }
        logger.debug("connected", metadata: metadata)
        return state.started(id: id, password: password)
    }

    /// A poll arrived with `segments` of the client's messages; `responder` answers it.
    func poll(_ ticket: Int, segments: [LongPollSegments.Segment], responder: LongPollResponder) {
        responders[ticket] = responder
        perform(state.poll(ticket, segments: segments, now: NIODeadline.now().uptimeNanoseconds))
        if state.phase != .ended, !partial.update(to: state.partialBytes) {
            logger.warning("ending a long-polling session: the server holds too many partly received messages", metadata: metadata)
            perform(state.end(reason: "server busy; retry later"))
        }
        guard state.heldPoll == ticket else { return }
        holdTimer?.cancel()
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        holdTimer = eventLoop.scheduleTask(in: .nanoseconds(Int64(LongPollSessionState.holdLimit))) {
            let connection = bound.value
            connection.perform(connection.state.holdExpired(ticket))
        }
    }

    /// The HTTP connection that held poll `ticket` closed.
    func pollGone(_ ticket: Int) {
        responders[ticket] = nil
        state.pollGone(ticket)
    }

    /// The page that opened the session closed its disconnect frame (it unloaded): the session
    /// ends now rather than after `abandonedAfter`, unless a WebSocket has taken it over.
    func disconnectFrameClosed() {
        guard state.carriesServerMessages else { return }
        perform(state.end(reason: "the page closed its long-polling connection"))
    }

    /// Ends the session ("going away"): the server stops, or the client is back as another session.
    func close(reason: String) {
        takeover?.close(reason: reason)
        perform(state.end(reason: reason))
    }

    // MARK: The namespace's messages

    /// Takes one buffer of encoded frames from the outbox; true when the caller must flush.
    func enqueue(_ frame: ByteBuffer) -> Bool {
        if !state.carriesServerMessages {
            guard takeover != nil else { return false }
            forwarded.append(frame)
            return forwarded.count == 1
        }
        var frame = frame
        while let payload = Self.readFrame(&frame) { take(payload) }
        return state.outgoingBytes > 0
    }

    /// Sends what was given since the last flush.
    func flush() {
        if let takeover, !forwarded.isEmpty {
            takeover.send(forwarded)
            forwarded = []
        }
        perform(state.flush())
        guard state.phase != .ended else { return }
        if state.outgoingBytes > maxPendingBytes || !backlog.update(to: state.outgoingBytes) {
            logger.warning("ending a long-polling session that fell behind: more than it may hold waits for it", metadata: metadata)
            metrics.slowReaderDisconnected()
            perform(state.end(reason: "fell behind"))
        }
    }

    /// One frame's payload: a whole message, a piece of one, or the count of pieces to follow.
    private func take(_ payload: [UInt8]) {
        if var current = pieces {
            current.collected += payload
            current.due -= 1
            if current.due == 0 {
                pieces = nil
                state.enqueue(current.collected)
            } else {
                pieces = current
            }
            return
        }
        // A message in pieces starts with their count: digits only, which no JSON message is.
        if !payload.isEmpty, payload.count <= 6, payload.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let count = Int(String(decoding: payload, as: UTF8.self)), count > 0
        {
            pieces = (count, [])
            return
        }
        state.enqueue(payload)
    }

    /// Reads one server frame (final, unmasked text: `TextFrame`) off `buffer`; nil at its end.
    static func readFrame(_ buffer: inout ByteBuffer) -> [UInt8]? {
        guard let first = buffer.readInteger(as: UInt8.self), first == TextFrame.finalText, let short = buffer.readInteger(as: UInt8.self) else {
            return nil
        }
        let length: Int
        switch short {
        case 126: guard let long = buffer.readInteger(as: UInt16.self) else { return nil }; length = Int(long)
        case 127: guard let long = buffer.readInteger(as: UInt64.self), long <= UInt64(Int.max) else { return nil }; length = Int(long)
        default: length = Int(short)
        }
        return buffer.readBytes(length: length)
    }

    // MARK: The upgrade

    /// A WebSocket asks to take the session over: it is sent `a`, or closed when the session
    /// cannot move (already moving, or ended).
    func offer(_ webSocket: WebSocketTakeover) {
        guard state.webSocketOffered() else {
            webSocket.close(reason: "This long-polling session cannot move to a WebSocket now.")
            return
        }
        takeover = webSocket
        webSocket.acknowledge()
    }

    /// Whether `webSocket` is the one taking the session over (another, refused, may still send
    /// and close before it goes).
    private func isTakeover(_ webSocket: ConnectionID) -> Bool { takeover?.id == webSocket }

    /// The WebSocket sent `a`: the server's messages go over it from now on.
    func webSocketAcknowledged(by webSocket: ConnectionID) {
        guard isTakeover(webSocket) else { return }
        perform(state.webSocketAcknowledged())
        guard !state.carriesServerMessages, counted == .longpoll else { return }
        // From now on the WebSocket counts the connection.
        metrics.connectionClosed(.longpoll)
        counted = nil
        logger.debug("moved to a WebSocket", metadata: metadata)
    }

    /// Requests that came over the WebSocket: held until the client's `n` has come over
    /// long-polling, so none overtakes one sent there before it. The SDK sends none before the
    /// switch and few in the moment it takes; a client that sends more than
    /// `maxHeldWebSocketRequests` meanwhile ends the session rather than fill memory.
    func receiveFromWebSocket(_ inputs: [SessionInput], parsed: Int, from webSocket: ConnectionID) {
        guard state.phase != .ended, isTakeover(webSocket) else { return inbox.parseBudget.release(parsed) }
        if state.phase == .upgraded(inputEnded: true) {
            inbox.add(inputs, from: connection, to: namespace, parsed: parsed)
            return
        }
        heldWebSocketRequests += inputs.count
        heldWebSocketInputs.append((inputs, parsed))
        guard heldWebSocketRequests > Self.maxHeldWebSocketRequests else { return }
        logger.notice("ending a long-polling session: too many WebSocket requests before its end of long polling", metadata: metadata)
        perform(state.end(reason: "more than \(Self.maxHeldWebSocketRequests) requests on the WebSocket before the switch"))
    }

    static let maxHeldWebSocketRequests = 1_024

    /// The WebSocket closed.
    func webSocketLost(_ webSocket: ConnectionID) {
        guard isTakeover(webSocket) else { return }
        takeover = nil
        forwarded = []
        perform(state.webSocketLost())
        guard state.phase == .polling else { return }
        // Back on long polling: what the WebSocket sent is not the client's (the SDK sends
        // nothing there before the switch).
        dropHeldWebSocketInputs()
    }

    private func dropHeldWebSocketInputs() {
        for (_, parsed) in heldWebSocketInputs { inbox.parseBudget.release(parsed) }
        heldWebSocketInputs = []
        heldWebSocketRequests = 0
    }

    // MARK: The client's messages over long-polling

    private func receive(_ messages: [[UInt8]]) {
        var inputs: [SessionInput] = []
        var parsed = 0
        for message in messages {
            let outcome = message.withUnsafeBytes { RealtimeDecoding.decode($0, budget: inbox.parseBudget, verifier: verifier) }
            switch outcome {
            case .input(let input, let share):
                inputs.append(input)
                parsed += share
            case .refused(let refusal, let note):
                if let note { logger.notice("\(note)", metadata: metadata) }
                inputs.append(refusal)
            case .ping:
                if state.carriesServerMessages { state.enqueue(ServerMessage.pong) } else { takeover?.send(TextFrame.frames(ServerMessage.pong)) }
            case .control("n"):
                submit(&inputs, parsed: &parsed)
                perform(state.clientEndedTransmission())
            case .control, .nothing:
                break
            case .close(let reason, _, _):
                submit(&inputs, parsed: &parsed)
                logger.notice("ending a long-polling session: \(reason)", metadata: metadata)
                perform(state.end(reason: reason))
                return
            }
        }
        submit(&inputs, parsed: &parsed)
        perform(state.flush())
    }

    private func submit(_ inputs: inout [SessionInput], parsed: inout Int) {
        guard !inputs.isEmpty else { return }
        inbox.add(inputs, from: connection, to: namespace, parsed: parsed)
        inputs = []
        parsed = 0
    }

    // MARK: Actions

    private func perform(_ actions: [LongPollSessionState.Action]) {
        // What answers carried away no longer counts against the budget of bytes waiting for
        // slow readers (growth is checked, and refused, at `flush`).
        defer { if state.outgoingBytes == 0 { backlog.update(to: 0) } }
        for action in actions {
            switch action {
            case .answer(let poll, let script):
                if state.heldPoll == nil { holdTimer?.cancel() }
                responders.removeValue(forKey: poll)?.answer(script)
            case .receive(let messages):
                receive(messages)
            case .releaseWebSocketInputs:
                let held = heldWebSocketInputs
                heldWebSocketInputs = []
                heldWebSocketRequests = 0
                for (inputs, parsed) in held { inbox.add(inputs, from: connection, to: namespace, parsed: parsed) }
            case .end(let reason):
                finish(reason: reason)
            }
        }
    }

    /// Forgets the session: its namespace detaches it (running its onDisconnect writes) after
    /// the requests it already handed over.
    private func finish(reason: String) {
        logger.debug("long-polling session ended: \(reason)", metadata: metadata)
        holdTimer?.cancel()
        tick?.cancel()
        tick = nil
        backlog.update(to: 0)
        partial.update(to: 0)
        dropHeldWebSocketInputs()
        // Polls still open (not the held one, answered by the state) close at once.
        for responder in responders.values { responder.answer(LongPollScript.close(callback: state.callback)) }
        responders = [:]
        takeover?.close(reason: reason)
        takeover = nil
        inbox.handOff()
        namespace.detach(connection)
        if let slot {
            self.slot = nil
            outbox.remove(slot)
        }
        if let counted {
            self.counted = nil
            metrics.connectionClosed(counted)
        }
        registry.remove(id)
        endedPromise.succeed()
    }

    /// 128 random bits in hex: what proves a request comes from the client that started the session.
    private static func randomPassword() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let text = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }.joined()
    }
}
