import Foundation
import KindlingCore
import KindlingProtocol
import KindlingSync

/// Everything the client decides, as a struct that takes inputs (a frame, a closed socket, a user
/// call) and returns the actions to carry out, the way swift-nio's handlers are written: the
/// connection's life, reassembly and decoding of what the server sends, request numbering and
/// routing of the answers, and the sync engine behind them. No I/O, so it is tested (and
/// fuzzed) without sockets; `Repo` is the thin shell that owns it behind a lock and performs the
/// actions.
///
/// Nothing a server sends can trap it: a message that does not decode, or data the client cannot
/// hold, closes the socket with the reason and reconnects after a back-off, like a lost
/// connection.
struct ConnectionStateMachine: Sendable {
    /// What the shell does for the state machine.
    enum Action: Sendable {
        /// Open socket `id` to the server.
        case open(id: Int)
        /// Send a message on socket `id` (if it is still the one open).
        case send(id: Int, message: String)
        /// Close socket `id`; `error` says why, when the server sent something unreadable.
        case close(id: Int, error: ProtocolError?)
        /// Call `connect()` again after a delay.
        case reconnect(after: Duration)
        /// Start the keepalive timer for socket `id`.
        case keepAlive(id: Int)
        /// Run a callback.
        case deliver(Delivery)
        /// Call `expire(request)` after `after`: a read or authentication still without a
        /// connection then fails as offline.
        case expire(request: Int, after: Duration)
    }

    /// How long a read or an authentication waits for a connection before it fails as offline:
    /// the Firebase SDKs' 3 s.
    static let connectTimeout: Duration = .seconds(3)

    /// An `authenticate` call waiting for the server's decision on the credential.
    private struct AuthWaiter: Sendable {
        var id: Int
        var completion: @Sendable (Result<JSONValue, DatabaseError>) -> Void
    }

    private(set) var lifecycle = ConnectionState.waiting(attempt: 0)
    private(set) var engine = SyncEngine()
    private var assembler = FrameAssembler(maxMessageBytes: 1 << 28)
    private var nextRequest = 1
    private var nextConnectionID = 1
    private var inflight: [Int: PendingRequest] = [:]
    private var queued: [QueuedRequest] = []
    private var nextCallerID = 1
    /// The `authenticate` calls the next answer to the credential decides.
    private var authWaiters: [AuthWaiter] = []
    /// The credential the connection authenticates with, sent first on every connection.
    private(set) var credential: String?
    /// Server time minus local time, in milliseconds, from the last handshake.
    private(set) var serverTimeOffset: Double = 0
    private var lastSend = ContinuousClock.now

    var isConnected: Bool { lifecycle.connectedID != nil }

    // MARK: Connection life

    /// Starts connecting if nothing is under way (and the user has not gone offline).
    mutating func connect() -> [Action] {
        guard case .waiting(let attempt) = lifecycle else { return [] }
        let id = nextConnectionID
        nextConnectionID += 1
        lifecycle = .connecting(id: id, attempt: attempt)
        assembler = FrameAssembler(maxMessageBytes: 1 << 28)
        return [.open(id: id)]
    }

    /// Stops the connection and retries until `goOnline`. Writes keep queueing locally.
    mutating func goOffline() -> [Action] {
        var actions: [Action] = lifecycle.connectionID.map { [.close(id: $0, error: nil)] } ?? []
        drop(next: .offline, into: &actions)
        return actions
    }

    /// Connects again after `goOffline`.
    mutating func goOnline() -> [Action] {
        guard case .offline = lifecycle else { return [] }
        lifecycle = .waiting(attempt: 0)
        return connect()
    }

    /// Socket `id` closed or could not be opened: retry after a back-off that grows with each
    /// failure in a row.
    mutating func closed(_ id: Int) -> [Action] {
        guard lifecycle.connectionID == id else { return [] }
        var attempt = 0
        if case .connecting(_, let failures) = lifecycle { attempt = failures + 1 }
        var actions: [Action] = []
        drop(next: .waiting(attempt: attempt), into: &actions)
        actions.append(.reconnect(after: Self.backOff(attempt: attempt)))
        return actions
    }

    /// Ends the connection for good (no reconnect) and fails what waits on it.
    mutating func shutdown() -> [Action] {
        var actions = goOffline()
        let requests = queued
        queued = []
        for request in requests { actions.append(.deliver(Delivery(queue: nil) { request.completion(.failure(.disconnected)) })) }
        let waiters = authWaiters
        authWaiters = []
        for waiter in waiters { actions.append(.deliver(Delivery(queue: nil) { waiter.completion(.failure(.disconnected)) })) }
        for write in engine.takeWrites() { actions.append(.deliver(Delivery(queue: nil) { write.completion(.disconnected) })) }
        return actions
    }

    /// The wait before reconnect attempt `attempt` (0 right after losing a good connection):
    /// 1 s growing by 1.3 per failure, capped at 30 s, then scaled by a random 50–100 % so that
    /// many clients dropped together do not all come back at the same instant.
    static func backOff(attempt: Int) -> Duration {
        let base = min(30, pow(1.3, Double(min(max(attempt, 0), 64))))
        return .milliseconds(Int(base * 1000 * Double.random(in: 0.5...1)))
    }

    /// Leaves the connected state: requests in flight are queued again (writes and listens are
    /// resent from the engine's lists on the next connect), and `.info/connected` turns false.
    private mutating func drop(next: ConnectionState, into actions: inout [Action]) {
        let wasConnected = isConnected
        let requeued = inflight.sorted { $0.key < $1.key }.compactMap { entry -> QueuedRequest? in
            if case .request(let request) = entry.value { return request }
            return nil
        }
        queued = requeued + queued
        inflight = [:]
        lifecycle = next
        // What waits for the next connection fails as offline if none comes in time.
        for request in requeued where request.expiresOffline { actions.append(.expire(request: request.id, after: Self.connectTimeout)) }
        if wasConnected { for waiter in authWaiters { actions.append(.expire(request: waiter.id, after: Self.connectTimeout)) } }
        if wasConnected { perform({ engine, effects in engine.infoChanged(.connected, to: .bool(false), into: &effects) }, into: &actions) }
    }

    /// True when socket `id` has been quiet for `interval`; the caller then sends a keepalive.
    mutating func keepAliveDue(on id: Int, after interval: Duration) -> Bool? {
        guard lifecycle.connectionID == id else { return nil }
        guard ContinuousClock.now - lastSend >= interval else { return false }
        lastSend = .now
        return true
    }

    // MARK: Receiving

    /// A text frame from socket `id`. Frames from a socket that is no longer current are stale
    /// and ignored; anything unreadable closes the socket (see the type's description).
    mutating func received(_ frame: String, on id: Int, now: Date = Date()) -> [Action] {
        guard lifecycle.connectionID == id else { return [] }
        var actions: [Action] = []
        do throws(ProtocolError) {
            guard case .message(let text) = try assembler.receive(frame) else { return [] }
            switch try ServerEnvelope.decode(text) {
            case .handshake(let hello):
                handshake(hello, on: id, now: now, into: &actions)
            case .pong, .otherControl:
                break
            case .response(let response):
                guard let pending = inflight.removeValue(forKey: response.number) else { break }
                let error = response.isOK ? nil : refusal(response, of: pending)
                if case .auth(let credential) = pending {
                    decideAuthentication(of: credential, error: error, on: id, into: &actions)
                } else {
                    perform({ engine, effects in engine.answer(pending, error: error, data: response.data, into: &effects) }, into: &actions)
                }
            case .push(.authRevoked):
                if let credential { signOut(refused: credential, on: id, into: &actions) }
            case .push(let push):
                guard isConnected else { throw ProtocolError(.malformedMessage, "Data before the handshake") }
                var effects: [SyncEngine.Effect] = []
                try engine.apply(push, into: &effects)
                carryOut(effects, into: &actions)
            }
        } catch {
            // A failure counts as a failed attempt: the back-off keeps growing while a server
            // answers every connection with garbage before its handshake.
            var attempt = 1
            if case .connecting(_, let failures) = lifecycle { attempt = failures + 1 }
            actions.append(.close(id: id, error: error))
            drop(next: .waiting(attempt: attempt), into: &actions)
            actions.append(.reconnect(after: Self.backOff(attempt: attempt)))
        }
        return actions
    }

    /// The server said hello: authenticate first (the server decides every later request as
    /// whoever this says), then every listen and unacknowledged write, then queued requests.
    private mutating func handshake(_ hello: ServerHandshake, on id: Int, now: Date, into actions: inout [Action]) {
        guard !isConnected else { return }
        // A clock before 1970 or from 2^53 ms on is no clock; the local one stands in for it.
        if let serverTime = hello.timestamp, let milliseconds = serverTime.rounded(.down).exactJSONInteger, milliseconds >= 0 {
            let offset = (serverTime - now.timeIntervalSince1970 * 1000).rounded()
            if offset != serverTimeOffset {
                serverTimeOffset = offset
                perform({ engine, effects in engine.infoChanged(.serverTimeOffset, to: .number(offset), into: &effects) }, into: &actions)
            }
        }
        lifecycle = .connected(id: id)
        if let credential { send(Self.authAction(credential), pending: .auth(credential: credential), into: &actions) }
        perform({ engine, effects in engine.resend(into: &effects) }, into: &actions)
        let requests = queued
        queued = []
        for request in requests { send(request.action, pending: .request(request), into: &actions) }
        perform({ engine, effects in engine.infoChanged(.connected, to: .bool(true), into: &effects) }, into: &actions)
        actions.append(.keepAlive(id: id))
    }

    /// The server's error for a request, naming what was refused and where.
    private func refusal(_ response: ServerResponse, of pending: PendingRequest) -> DatabaseError {
        let operation: (name: String, path: String)
        switch pending {
        case .write(let writeID): operation = engine.writes.first { $0.writeID == writeID }?.action.operation ?? ("write", "/")
        case .listen(let listen): operation = ("listen", listen.path.description)
        case .request(let request): operation = request.action.operation
        case .auth: operation = ("authenticate", "/")
        }
        return .server(
            status: response.status, message: response.data.stringValue ?? response.data.description, operation: operation.name,
            path: operation.path)
    }

    /// The server decided the credential sent: the `authenticate` calls waiting learn it, and a
    /// refusal signs the client out. An answer for a credential replaced since decides nothing.
    private mutating func decideAuthentication(of sent: String, error: DatabaseError?, on id: Int, into actions: inout [Action]) {
        guard credential == sent else { return }
        let waiters = authWaiters
        authWaiters = []
        let result: Result<JSONValue, DatabaseError> = error.map { .failure($0) } ?? .success(.null)
        for waiter in waiters { actions.append(.deliver(Delivery(queue: nil) { waiter.completion(result) })) }
        if error != nil { signOut(refused: sent, on: id, into: &actions) }
    }

    /// The server refused `refused`: when it was first sent, again first thing after a
    /// reconnect (a token that expired meanwhile), or later (`ac`). As the official SDKs do, the
    /// client signs out (the credential is dropped, so no later connection sends it) and closes
    /// the connection: `.info/connected` observers see it drop, the next connection starts
    /// anonymous, and the listens that needed the credential are refused there, cancelling their
    /// observers. A credential replaced while the answer was on its way stays.
    private mutating func signOut(refused: String, on id: Int, into actions: inout [Action]) {
        guard credential == refused else { return }
        credential = nil
        actions.append(.close(id: id, error: nil))
        drop(next: .waiting(attempt: 0), into: &actions)
        actions.append(.reconnect(after: Self.backOff(attempt: 0)))
    }

    // MARK: Sending

    /// Sends a request now if connected. Otherwise only plain requests are queued: writes and
    /// listens are resent from the engine's lists on connect.
    private mutating func send(_ action: KindlingProtocol.Action, pending: PendingRequest, into actions: inout [Action]) {
        guard let id = lifecycle.connectedID else {
            if case .request(let request) = pending { queued.append(request) }
            return
        }
        let number = nextRequest
        nextRequest += 1
        inflight[number] = pending
        actions.append(.send(id: id, message: ClientMessage.request(Request(number: number, action: action)).encoded))
        lastSend = .now
    }

    /// Runs a change on the engine and turns its effects into actions.
    private mutating func perform(_ change: (inout SyncEngine, inout [SyncEngine.Effect]) -> Void, into actions: inout [Action]) {
        var effects: [SyncEngine.Effect] = []
        change(&engine, &effects)
        carryOut(effects, into: &actions)
    }

    private mutating func carryOut(_ effects: [SyncEngine.Effect], into actions: inout [Action]) {
        for effect in effects {
            switch effect {
            case .send(let action, let pending): send(action, pending: pending, into: &actions)
            case .deliver(let delivery): actions.append(.deliver(delivery))
            }
        }
    }

    // MARK: User operations

    /// A handle for a caller's request or `authenticate`, to cancel or expire it by.
    mutating func reserveCallerID() -> Int {
        defer { nextCallerID += 1 }
        return nextCallerID
    }

    /// Any request whose answer the caller awaits; queued while offline. `expiresOffline` (a
    /// read) fails it as offline when no connection takes it within `connectTimeout`.
    mutating func request(
        _ action: KindlingProtocol.Action, id: Int = 0, expiresOffline: Bool = false,
        completion: @escaping @Sendable (Result<JSONValue, DatabaseError>) -> Void
    ) -> [Action] {
        var actions: [Action] = []
        send(action, pending: .request(QueuedRequest(action: action, id: id, expiresOffline: expiresOffline, completion: completion)), into: &actions)
        if expiresOffline, !isConnected { actions.append(.expire(request: id, after: Self.connectTimeout)) }
        return actions
    }

    /// The caller of request `id` stopped waiting (its task was cancelled): it is answered
    /// `cancelled` now and its answer, if one comes, is dropped. A write it made stays made.
    mutating func cancel(_ id: Int) -> [Action] {
        var cancelled: [(operation: (name: String, path: String), completion: @Sendable (Result<JSONValue, DatabaseError>) -> Void)] = []
        if let index = queued.firstIndex(where: { $0.id == id }) {
            let request = queued.remove(at: index)
            cancelled.append((request.action.operation, request.completion))
        }
        for (number, pending) in inflight {
            if case .request(let request) = pending, request.id == id {
                inflight[number] = nil
                cancelled.append((request.action.operation, request.completion))
            }
        }
        if let index = authWaiters.firstIndex(where: { $0.id == id }) {
            cancelled.append((("authenticate", "/"), authWaiters.remove(at: index).completion))
        }
        return cancelled.map { entry in
            .deliver(Delivery(queue: nil) { entry.completion(.failure(.cancelled(operation: entry.operation.name, path: entry.operation.path))) })
        }
    }

    /// The connect timeout of request (or `authenticate`) `id` passed: still without a
    /// connection, it fails as offline.
    mutating func expire(_ id: Int) -> [Action] {
        guard !isConnected else { return [] }
        var expired: [(operation: (name: String, path: String), completion: @Sendable (Result<JSONValue, DatabaseError>) -> Void)] = []
        if let index = queued.firstIndex(where: { $0.id == id && $0.expiresOffline }) {
            let request = queued.remove(at: index)
            expired.append((request.action.operation, request.completion))
        }
        if let index = authWaiters.firstIndex(where: { $0.id == id }) {
            expired.append((("authenticate", "/"), authWaiters.remove(at: index).completion))
        }
        return expired.map { entry in
            .deliver(Delivery(queue: nil) { entry.completion(.failure(.offline(operation: entry.operation.name, path: entry.operation.path))) })
        }
    }

    mutating func observe(
        path: Path, query: Query, eventType: DataEventType, queue: DispatchQueue,
        callback: @escaping @Sendable (DataEvent) -> Void, cancel: (@Sendable (DatabaseError) -> Void)?
    ) -> (Int, [Action]) {
        var actions: [Action] = []
        var id = 0
        let connected = isConnected
        perform(
            { engine, effects in
                id = engine.observe(
                    path: path, query: query, eventType: eventType, queue: queue, callback: callback, cancel: cancel,
                    connected: connected, into: &effects)
            }, into: &actions)
        return (id, actions)
    }

    /// Drops every write the server has not acknowledged (see `SyncEngine.purgeWrites`).
    mutating func purgeWrites() -> [Action] {
        var actions: [Action] = []
        perform({ engine, effects in engine.purgeWrites(into: &effects) }, into: &actions)
        return actions
    }

    /// Listens start from `seed`'s data for their location and query, when it has some (the
    /// data persistence kept from an earlier run).
    mutating func seedServerData(_ seed: @escaping @Sendable (Path, String) -> Node?) {
        engine.seed = seed
    }

    /// Observes the client's own `info` (`.info/connected`, `.info/serverTimeOffset`).
    mutating func observeInfo(_ info: InfoPath, queue: DispatchQueue, callback: @escaping @Sendable (DataEvent) -> Void) -> (Int, [Action]) {
        var actions: [Action] = []
        var id = 0
        let value = infoValue(info)
        perform({ engine, effects in id = engine.observeInfo(info, value: value, queue: queue, callback: callback, into: &effects) }, into: &actions)
        return (id, actions)
    }

    /// The value of the client's own `info` now.
    func infoValue(_ info: InfoPath) -> JSONValue {
        switch info {
        case .connected: return .bool(isConnected)
        case .serverTimeOffset: return .number(serverTimeOffset)
        }
    }

    mutating func removeObserver(_ handle: Int) -> [Action] {
        var actions: [Action] = []
        let connected = isConnected
        perform({ engine, effects in engine.removeObserver(handle, connected: connected, into: &effects) }, into: &actions)
        return actions
    }

    /// A local write (see `SyncEngine.write`).
    mutating func write(
        _ action: KindlingProtocol.Action, completion: @escaping @Sendable (DatabaseError?) -> Void,
        apply: (inout SyncTree, Int) throws -> [Event]
    ) throws(DatabaseError) -> [Action] {
        var effects: [SyncEngine.Effect] = []
        try engine.write(action, completion: completion, into: &effects, apply: apply)
        var actions: [Action] = []
        carryOut(effects, into: &actions)
        return actions
    }

    /// The server's clock as best known, in milliseconds: local time corrected by the last
    /// handshake's offset; whole milliseconds, as the server's own timestamps are (a fractional
    /// estimate would show a value no server ever writes).
    func estimatedServerTime(now: Date = Date()) -> Double { (now.timeIntervalSince1970 * 1000 + serverTimeOffset).rounded(.down) }

    /// A push id for the estimated server time, clamped into what its eight time characters
    /// hold (0 to 2^48 - 1 ms), so no offset a server's handshake implies can trap the encoding.
    mutating func nextPushID(now: Date = Date()) -> Key {
        let milliseconds = min(max(estimatedServerTime(now: now), 0), 281_474_976_710_655)
        return engine.nextPushID(timestamp: Int64(milliseconds))
    }

    /// Sets the credential sent first on every connection (nil signs out) and waits, as caller
    /// `id`, for the server's decision on it: now when connected, else on the next connection
    /// (failing as offline if none comes within `connectTimeout`; the credential stays set). An
    /// earlier call still waiting is answered `cancelled`: this one replaced its credential.
    mutating func authenticate(
        _ credential: String?, id: Int, completion: @escaping @Sendable (Result<JSONValue, DatabaseError>) -> Void
    ) -> [Action] {
        var actions: [Action] = []
        let replaced = authWaiters
        authWaiters = []
        for waiter in replaced {
            actions.append(.deliver(Delivery(queue: nil) { waiter.completion(.failure(.cancelled(operation: "authenticate", path: "/"))) }))
        }
        self.credential = credential
        guard let credential else {
            // Signing out: the server forgets the credential; a later connection starts anonymous.
            if isConnected {
                send(.unauth, pending: .request(QueuedRequest(action: .unauth, id: id, completion: completion)), into: &actions)
            } else {
                actions.append(.deliver(Delivery(queue: nil) { completion(.success(.null)) }))
            }
            return actions
        }
        authWaiters.append(AuthWaiter(id: id, completion: completion))
        if isConnected {
            send(Self.authAction(credential), pending: .auth(credential: credential), into: &actions)
        } else {
            actions.append(.expire(request: id, after: Self.connectTimeout))
        }
        return actions
    }

    /// `auth` for a JWT (an ID token), `gauth` for anything else (an access token, an admin
    /// secret, the emulator's `owner`), as the SDKs choose.
    static func authAction(_ credential: String) -> KindlingProtocol.Action {
        let isJWT = credential.split(separator: ".", omittingEmptySubsequences: false).count == 3
        return .auth(AuthRequest(isGoogleToken: !isJWT, credential: credential))
    }
}
