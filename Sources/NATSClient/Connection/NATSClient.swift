import NIOCore
import NIOPosix

/// A NATS connection with automatic reconnect. An actor owns all connection state: the channel,
/// live subscriptions (re-sent after every reconnect), pending flushes and requests; the NIO
/// handler feeds it server operations in order.
public actor NATSClient {
    private enum Phase: Equatable { case idle, handshaking, connected, reconnecting, closed }

    private struct Subscription {
        var subject: String
        var queue: String?
        /// nil for the shared request inbox.
        var continuation: AsyncStream<NATSMessage>.Continuation?
    }

    /// A flush waiting for its PONG; the continuation is nil once it timed out (the PONG still
    /// comes and must be matched to this PING, not the next).
    private struct PendingPing {
        var id: Int
        var continuation: CheckedContinuation<Result<Void, NATSError>, Never>?
        var timer: Task<Void, Never>?
    }

    private struct PendingRequest {
        var continuation: CheckedContinuation<Result<NATSMessage, NATSError>, Never>
        var timer: Task<Void, Never>
        /// Whether a reply ends the request (`request(until:)`); nil: the first does.
        var isFinal: (@Sendable (NATSMessage) -> Bool)?
        /// The first reply `isFinal` did not accept: the answer if no other comes in time.
        var provisional: NATSMessage?
        /// How long to wait for an accepted reply once a provisional one has come (nil: until
        /// the timeout), and when the timeout ends.
        var grace: Duration?
        var deadline: ContinuousClock.Instant
    }

    private let options: NATSOptions
    private var addresses: [NATSServerAddress]
    private var phase: Phase = .idle
    private var channel: (any Channel)?
    private var generation = 0
    private var everConnected = false
    private var currentAddress: NATSServerAddress?
    private var handshake: CheckedContinuation<Result<Void, NATSError>, Never>?
    private var lastError: NATSError?
    /// What the server said in its latest INFO.
    public private(set) var serverInfo: NATSServerInfo?

    private var subscriptions: [UInt64: Subscription] = [:]
    /// Subscriptions being drained (`drain(sid:)`): unsubscribed, still handed what the server
    /// sent before it took the UNSUB; not subscribed again after a reconnect.
    private var draining: [UInt64: AsyncStream<NATSMessage>.Continuation] = [:]
    private var nextSID: UInt64 = 1
    private var pongWaiters: [PendingPing] = []
    private var nextPingID = 0
    private let inboxPrefix: String
    private var inboxSID: UInt64?
    private var requests: [String: PendingRequest] = [:]
    private var nextRequestID: UInt64 = 0
    private var eventListeners: [Int: AsyncStream<NATSConnectionEvent>.Continuation] = [:]
    private var nextListenerID = 0
    /// Keep-alive PINGs sent since the last PONG.
    private var pingsOut = 0

    private init(options: NATSOptions, addresses: [NATSServerAddress]) {
        self.options = options
        self.addresses = addresses
        self.inboxPrefix = "_INBOX.\(NATSClient.randomToken())."
    }

    /// Connects to the first server in `options.servers` that completes the handshake.
    public static func connect(_ options: NATSOptions) async throws(NATSError) -> NATSClient {
        var addresses: [NATSServerAddress] = []
        for url in options.servers { addresses.append(try NATSServerAddress(parsing: url)) }
        guard !addresses.isEmpty else { throw .invalidURL("no servers") }
        let client = NATSClient(options: options, addresses: addresses)
        try await client.start()
        return client
    }

    /// Connects to the given URLs with default options.
    public static func connect(_ servers: [String]) async throws(NATSError) -> NATSClient {
        try await connect(NATSOptions(servers: servers))
    }

    private func start() async throws(NATSError) {
        var failures: [String] = []
        for address in addresses {
            switch await establish(address) {
            case .success: return
            case .failure(let error): failures.append("\(address): \(error)")
            }
        }
        phase = .closed
        throw .connectionFailed(failures.joined(separator: "; "))
    }

    // MARK: Public API

    /// The largest message (headers plus payload) the current server accepts.
    public var maxPayload: Int { serverInfo?.maxPayload ?? 1_048_576 }

    /// A stream of connection changes for one listener; it ends when the client closes.
    public func connectionEvents() -> AsyncStream<NATSConnectionEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: NATSConnectionEvent.self)
        if phase == .closed {
            continuation.yield(.closed)
            continuation.finish()
            return stream
        }
        nextListenerID += 1
        let id = nextListenerID
        eventListeners[id] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.removeListener(id) } }
        return stream
    }

    /// Publishes a message; headers go as HPUB. Fails with `.notConnected` while reconnecting (the
    /// caller decides whether to retry) and `.maxPayloadExceeded` before anything is sent.
    public func publish(_ subject: String, payload: [UInt8] = [], headers: NATSHeaders? = nil, reply: String? = nil) throws(NATSError) {
        // Not during a reconnect's handshake either: the subscriptions (the request inbox too)
        // are sent again only at its end, so a reply to a request sent before would be lost
        // and the request would wait for its whole timeout.
        guard phase == .connected else { throw phase == .closed ? .closed() : .notConnected() }
        let limit = maxPayload
        try send { buffer throws(NATSError) in
            try NATSEncoder.publish(subject: subject, reply: reply, headers: headers, payload: payload, maxPayload: limit, into: &buffer)
        }
    }

    /// Subscribes (optionally in a queue group). The subscription is re-sent after reconnects.
    public func subscribe(_ subject: String, queue: String? = nil) throws(NATSError) -> NATSSubscription {
        guard phase != .closed else { throw .closed() }
        try NATSEncoder.validate(subject, what: "subject")
        if let queue { try NATSEncoder.validate(queue, what: "queue group") }
        let sid = nextSID
        nextSID += 1
        let (stream, continuation) = AsyncStream.makeStream(of: NATSMessage.self, bufferingPolicy: .bufferingOldest(options.pendingMessageLimit))
        continuation.onTermination = { [weak self] _ in Task { await self?.unsubscribe(sid: sid) } }
        subscriptions[sid] = Subscription(subject: subject, queue: queue, continuation: continuation)
        if phase == .connected {
            try? send { buffer throws(NATSError) in try NATSEncoder.subscribe(subject: subject, queue: queue, sid: sid, into: &buffer) }
        }
        return NATSSubscription(subject: subject, sid: sid, client: self, stream: stream)
    }

    /// Sends a request and waits for the first reply. Replies arrive on one shared wildcard inbox
    /// subscription; a 503 status reply (nobody listening) becomes `.noResponders`.
    ///
    /// With `isFinal`, waits for the first reply it accepts instead: the first one it does not
    /// accept is kept, and returned at the timeout if no other came. For a request that more
    /// than one server may answer, where the first answer is not always the one that counts (a
    /// JetStream stream leader back from a partition refuses a publish from its old store, at
    /// once, while the real leader stores it and acknowledges second). With `grace` as well, a
    /// kept reply is returned once `grace` has passed without an accepted one (within the
    /// timeout still), for a caller that can check the kept answer some other way and would
    /// rather do so soon.
    public func request(
        _ subject: String, payload: [UInt8] = [], headers: NATSHeaders? = nil, timeout: Duration = .seconds(2),
        until isFinal: (@Sendable (NATSMessage) -> Bool)? = nil, grace: Duration? = nil
    ) async throws(NATSError) -> NATSMessage {
        try ensureInbox()
        nextRequestID += 1
        let token = String(nextRequestID)
        try publish(subject, payload: payload, headers: headers, reply: inboxPrefix + token)
        let deadline = ContinuousClock.now + timeout
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<NATSMessage, NATSError>, Never>) in
            let timer = expiry(of: token, after: timeout, .timeout("no reply on \(subject) within \(timeout)"))
            requests[token] = PendingRequest(continuation: continuation, timer: timer, isFinal: isFinal, grace: grace, deadline: deadline)
        }
        return try result.get()
    }

    /// A unique subject for replies (the client's inbox prefix plus a fresh token).
    public func newInbox() -> String {
        "_INBOX.\(NATSClient.randomToken())"
    }

    /// Round-trips a PING so everything sent before it has been processed by the server.
    public func flush(timeout: Duration = .seconds(2)) async throws(NATSError) {
        try send { buffer throws(NATSError) in NATSEncoder.ping(into: &buffer) }
        nextPingID += 1
        let id = nextPingID
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, NATSError>, Never>) in
            let timer = Task { [weak self] in
                try? await Task.sleep(for: timeout)
                await self?.expirePing(id)
            }
            pongWaiters.append(PendingPing(id: id, continuation: continuation, timer: timer))
        }
        try result.get()
    }

    /// Unsubscribes everything, lets the server process what was sent, then closes. Messages
    /// the server sent before it took the UNSUBs still reach their subscriptions (as with
    /// `drain(sid:)`), and what is buffered there stays readable.
    public func drain() async {
        for (sid, subscription) in subscriptions {
            guard let continuation = subscription.continuation else { continue }
            subscriptions[sid] = nil
            draining[sid] = continuation
            try? send { buffer throws(NATSError) in NATSEncoder.unsubscribe(sid: sid, into: &buffer) }
        }
        try? await flush()
        close()
    }

    /// Leaves the server this client is connected to for another: the connection is closed and
    /// the usual reconnect tries the other servers first, that one last. For a server that
    /// still answers but cannot serve what the caller needs (its JetStream lost its peers).
    /// Nothing happens unless connected.
    public func leaveServer() {
        guard phase == .connected else { return }
        lastError = .connectionFailed("left \(currentAddress.map { "\($0)" } ?? "the server") for another")
        channel?.close(promise: nil)
    }

    /// The address of the server this client is connected to (or was, while reconnecting).
    public var connectedAddress: NATSServerAddress? { currentAddress }

    /// True while a connection is up (not while reconnecting or closed).
    public var isConnected: Bool { phase == .connected }

    /// Closes the connection for good: pending calls fail with `.closed`, subscriptions end.
    public func close() {
        guard phase != .closed else { return }
        phase = .closed
        generation += 1
        channel?.close(promise: nil)
        channel = nil
        handshake?.resume(returning: .failure(.closed()))
        handshake = nil
        failPongWaiters(.closed())
        for token in Array(requests.keys) { finishRequest(token, .failure(.closed())) }
        for subscription in subscriptions.values { subscription.continuation?.finish() }
        subscriptions = [:]
        for continuation in draining.values { continuation.finish() }
        draining = [:]
        emit(.closed)
        for listener in eventListeners.values { listener.finish() }
        eventListeners = [:]
    }

    // MARK: Subscriptions and requests

    func unsubscribe(sid: UInt64) {
        guard let subscription = subscriptions.removeValue(forKey: sid) else { return }
        subscription.continuation?.finish()
        if phase == .connected {
            try? send { buffer throws(NATSError) in NATSEncoder.unsubscribe(sid: sid, into: &buffer) }
        }
    }

    /// Sends UNSUB, then waits for a PING's PONG: the server answers it after every message it
    /// delivered before the UNSUB, and those still reach the subscription, which ends after
    /// them. Without a connection (or once the PONG is late) it ends at once: nothing more
    /// can come.
    func drain(sid: UInt64) async {
        guard let continuation = subscriptions[sid]?.continuation else { return }
        subscriptions[sid] = nil
        draining[sid] = continuation
        if phase == .connected {
            try? send { buffer throws(NATSError) in NATSEncoder.unsubscribe(sid: sid, into: &buffer) }
            try? await flush()
        }
        draining.removeValue(forKey: sid)?.finish()
    }

    private func ensureInbox() throws(NATSError) {
        guard phase != .closed else { throw .closed() }
        guard inboxSID == nil else { return }
        let sid = nextSID
        nextSID += 1
        subscriptions[sid] = Subscription(subject: inboxPrefix + "*", queue: nil, continuation: nil)
        inboxSID = sid
        if phase == .connected {
            try send { buffer throws(NATSError) in try NATSEncoder.subscribe(subject: inboxPrefix + "*", queue: nil, sid: sid, into: &buffer) }
        }
    }

    private func finishRequest(_ token: String, _ result: Result<NATSMessage, NATSError>) {
        guard let pending = requests.removeValue(forKey: token) else { return }
        pending.timer.cancel()
        pending.continuation.resume(returning: result)
    }

    /// A timer that ends request `token` after `duration` (`expireRequest`), unless cancelled
    /// first.
    private func expiry(of token: String, after duration: Duration, _ error: NATSError) -> Task<Void, Never> {
        Task { [weak self] in
            do {
                try await Task.sleep(for: duration)
            } catch {
                return
            }
            await self?.expireRequest(token, error)
        }
    }

    /// A request's time is up: its provisional reply if it has one, else `error`.
    private func expireRequest(_ token: String, _ error: NATSError) {
        finishRequest(token, requests[token]?.provisional.map { .success($0) } ?? .failure(error))
    }

    /// A reply to request `token`: ends it, unless the request waits for another (`isFinal`).
    private func answerRequest(_ token: String, _ message: NATSMessage) {
        if let pending = requests[token], let isFinal = pending.isFinal, !isFinal(message) {
            guard pending.provisional == nil else { return }
            requests[token]?.provisional = message
            if let grace = pending.grace, ContinuousClock.now + grace < pending.deadline {
                // A new timer ends the wait `grace` from here, with the kept reply.
                pending.timer.cancel()
                requests[token]?.timer = expiry(of: token, after: grace, .timeout("no accepted reply within \(grace) of a kept one"))
            }
            return
        }
        finishRequest(token, .success(message))
    }

    private func expirePing(_ id: Int) {
        guard let index = pongWaiters.firstIndex(where: { $0.id == id }), let continuation = pongWaiters[index].continuation else { return }
        pongWaiters[index].continuation = nil
        continuation.resume(returning: .failure(.timeout("no PONG")))
    }

    private func failPongWaiters(_ error: NATSError) {
        let waiters = pongWaiters
        pongWaiters = []
        for waiter in waiters {
            waiter.timer?.cancel()
            waiter.continuation?.resume(returning: .failure(error))
        }
    }

    private func removeListener(_ id: Int) {
        eventListeners[id] = nil
    }

    private func emit(_ event: NATSConnectionEvent) {
        for listener in eventListeners.values { listener.yield(event) }
    }

    private func send(_ build: (inout ByteBuffer) throws(NATSError) -> Void) throws(NATSError) {
        guard let channel, phase == .connected || phase == .handshaking else {
            throw phase == .closed ? .closed() : .notConnected()
        }
        var buffer = channel.allocator.buffer(capacity: 128)
        try build(&buffer)
        channel.writeAndFlush(buffer, promise: nil)
    }

    // MARK: Connection lifecycle

    private func establish(_ address: NATSServerAddress) async -> Result<Void, NATSError> {
        let (stream, events) = AsyncStream.makeStream(of: Result<NATSServerOp, NATSProtocolError>.self)
        let newChannel: any Channel
        do {
            newChannel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(TimeAmount(options.connectTimeout))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(NATSChannelHandler(events: events))
                    }
                }
                .connect(host: address.host, port: address.port).get()
        } catch {
            return .failure(.connectionFailed("\(address): \(error)"))
        }
        guard phase != .closed else {
            newChannel.close(promise: nil)
            return .failure(.closed())
        }
        generation += 1
        let current = generation
        let previousPhase = phase
        channel = newChannel
        currentAddress = address
        lastError = nil
        phase = .handshaking
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, NATSError>, Never>) in
            handshake = continuation
            Task { [weak self] in
                for await event in stream { await self?.receive(event, generation: current) }
                await self?.connectionEnded(generation: current)
            }
            let timeout = options.connectTimeout
            Task { [weak self] in
                try? await Task.sleep(for: timeout)
                await self?.handshakeTimedOut(generation: current)
            }
        }
        if case .failure = result, phase == .handshaking {
            phase = previousPhase == .idle ? .idle : .reconnecting
        }
        return result
    }

    private func receive(_ event: Result<NATSServerOp, NATSProtocolError>, generation current: Int) {
        guard current == generation else { return }
        switch event {
        case .failure(let error):
            lastError = .protocolError(error)
        case .success(.info(let info)):
            serverInfo = info
            learn(info.connectURLs)
            if phase == .handshaking {
                var connect = NATSEncoder.ConnectOptions()
                connect.name = options.name
                connect.user = options.user
                connect.pass = options.password
                connect.authToken = options.token
                try? send { buffer throws(NATSError) in
                    NATSEncoder.connect(connect, into: &buffer)
                    NATSEncoder.ping(into: &buffer)
                }
            }
        case .success(.pong):
            // Any PONG shows the connection is alive.
            pingsOut = 0
            if phase == .handshaking {
                completeHandshake()
            } else if !pongWaiters.isEmpty {
                let waiter = pongWaiters.removeFirst()
                waiter.timer?.cancel()
                waiter.continuation?.resume(returning: .success(()))
            }
        case .success(.err(let text)):
            lastError = .serverError(text)
        case .success(.msg(let inbound)):
            deliver(inbound)
        case .success(.ping), .success(.ok):
            break
        }
    }

    private func completeHandshake() {
        for (sid, subscription) in subscriptions.sorted(by: { $0.key < $1.key }) {
            try? send { buffer throws(NATSError) in
                try NATSEncoder.subscribe(subject: subscription.subject, queue: subscription.queue, sid: sid, into: &buffer)
            }
        }
        phase = .connected
        if let currentAddress { emit(everConnected ? .reconnected(currentAddress) : .connected(currentAddress)) }
        everConnected = true
        handshake?.resume(returning: .success(()))
        handshake = nil
        startKeepAlive()
    }

    /// PINGs the connection of this generation every `pingInterval` until it ends.
    private func startKeepAlive() {
        guard let interval = options.pingInterval else { return }
        pingsOut = 0
        let current = generation
        Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self, await self.keepAlivePing(generation: current) else { return }
            }
        }
    }

    /// Sends one keep-alive PING, or closes the connection when `maxPingsOut` are unanswered
    /// (a stalled link: the close starts a reconnect). False once this generation is over.
    private func keepAlivePing(generation current: Int) -> Bool {
        guard current == generation, phase == .connected else { return false }
        guard pingsOut < options.maxPingsOut else {
            lastError = .timeout("no PONG to \(pingsOut) keep-alive PINGs")
            channel?.close(promise: nil)
            return false
        }
        pingsOut += 1
        nextPingID += 1
        // Its PONG comes in order with those of flushes: a waiter with nothing to resume.
        pongWaiters.append(PendingPing(id: nextPingID, continuation: nil, timer: nil))
        try? send { buffer throws(NATSError) in NATSEncoder.ping(into: &buffer) }
        return true
    }

    private func deliver(_ inbound: NATSInboundMessage) {
        if let continuation = draining[inbound.sid] {
            continuation.yield(inbound.message)
            return
        }
        guard let subscription = subscriptions[inbound.sid] else { return }
        if let continuation = subscription.continuation {
            continuation.yield(inbound.message)
            return
        }
        let subject = inbound.message.subject
        guard subject.hasPrefix(inboxPrefix) else { return }
        let token = String(subject.dropFirst(inboxPrefix.count))
        if inbound.message.status == 503 {
            finishRequest(token, .failure(.noResponders("no responders")))
        } else {
            answerRequest(token, inbound.message)
        }
    }

    private func learn(_ urls: [String]) {
        for url in urls {
            guard let address = try? NATSServerAddress(parsing: url), !addresses.contains(address) else { continue }
            addresses.append(address)
        }
    }

    private func handshakeTimedOut(generation current: Int) {
        guard current == generation, phase == .handshaking else { return }
        lastError = .timeout("handshake")
        channel?.close(promise: nil)
    }

    private func connectionEnded(generation current: Int) {
        guard current == generation else { return }
        channel = nil
        failPongWaiters(.notConnected("connection lost"))
        // A reply to a request sent on the lost connection may never come: its caller hears now
        // rather than at its timeout, and can retry on the next connection.
        for token in Array(requests.keys) { finishRequest(token, .failure(.notConnected("connection lost"))) }
        switch phase {
        case .handshaking:
            handshake?.resume(returning: .failure(lastError ?? .connectionFailed("closed during handshake")))
            handshake = nil
        case .connected:
            phase = .reconnecting
            emit(.disconnected)
            Task { await self.reconnect() }
        case .idle, .reconnecting, .closed:
            break
        }
    }

    private func reconnect() async {
        var pass = 0
        while phase == .reconnecting {
            for address in reconnectOrder() {
                guard phase == .reconnecting else { return }
                if case .success = await establish(address) { return }
            }
            pass += 1
            if let limit = options.maxReconnectPasses, pass >= limit {
                close()
                return
            }
            let exponent = min(pass - 1, 10)
            let wait = min(options.reconnectWait * (1 << exponent), options.maxReconnectWait)
            try? await Task.sleep(for: wait)
        }
    }

    /// The servers after the one that was lost, then that one last.
    private func reconnectOrder() -> [NATSServerAddress] {
        guard let currentAddress, let index = addresses.firstIndex(of: currentAddress) else { return addresses }
        return Array(addresses[(index + 1)...] + addresses[...index])
    }

    /// 22 random letters and digits: inbox names, object ids.
    public static func randomToken() -> String {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
        var generator = SystemRandomNumberGenerator()
        return String((0..<22).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] })
    }
}

extension TimeAmount {
    /// A NIO time amount from a Swift Duration.
    fileprivate init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
