import Dispatch
import Foundation
import KindlingCore
import KindlingProtocol
import NIOCore
import NIOSSL
import Synchronization

/// The engine behind a `Database`: one connection, one sync tree, and everything waiting on them.
///
/// All state lives in one `Mutex`, and every change to it (a user call, a frame from the socket,
/// the socket closing) is one critical section that updates the state and then only *enqueues*
/// effects: frames onto the channel, events onto the observers' dispatch queues, continuations.
/// Those never block, so the lock is never held across a wait, and because they are enqueued in
/// the critical section their order is exactly the order of the state changes. This is the
/// "single serial owner" of the sync tree without the reentrancy and ordering pitfalls of
/// `await`ing an actor from synchronous APIs like `observe`.
final class Repo: Sendable {
    let host: String
    let port: Int
    let namespace: String
    /// Set for an `https://` database.
    let tls: NIOSSLContext?
    private let state = Mutex(State())

    init(host: String, port: Int, namespace: String, tls: NIOSSLContext? = nil) {
        self.host = host
        self.port = port
        self.namespace = namespace
        self.tls = tls
    }

    /// How a request's response is routed.
    enum Pending: Sendable {
        /// A user write; the response acknowledges (or reverts) it in the sync tree.
        case write(writeID: Int)
        /// A server listen; `ok` completes it, an error cancels it.
        case listen(ServerListen)
        /// Anything else: the caller is waiting for the result.
        case request(QueuedRequest)
    }

    /// A request made while offline (or in flight when the connection dropped), sent on connect.
    struct QueuedRequest: Sendable {
        var action: String
        var body: JSONValue
        var completion: @Sendable (Result<JSONValue, DatabaseError>) -> Void
    }

    /// A write the server has not acknowledged. Kept until it is, and sent again, in order, after
    /// every reconnect.
    struct PendingWrite: Sendable {
        var writeID: Int
        var action: String
        var body: JSONValue
        var completion: @Sendable (DatabaseError?) -> Void
    }

    /// A registered callback.
    struct Observer: Sendable {
        var path: Path
        var query: Query
        var eventType: DataEventType
        var queue: DispatchQueue
        var callback: @Sendable (DataEvent) -> Void
        /// Observers of `.info/connected` live outside the sync tree.
        var isConnectedInfo: Bool
        /// Called once if the server refuses or revokes the listen behind this observer.
        var cancel: (@Sendable (DatabaseError) -> Void)? = nil
    }

    struct State: Sendable {
        var lifecycle = ConnectionState.waiting(attempt: 0)
        var syncTree = SyncTree()
        var assembler = FrameAssembler(maxMessageBytes: 1 << 28)
        var nextRequest = 1
        var nextWriteID = 1
        var nextRegistration = 1
        var nextConnectionID = 1
        var inflight: [Int: Pending] = [:]
        var writes: [PendingWrite] = []
        var queued: [QueuedRequest] = []
        /// The server listens the sync tree wants, in the order they were started.
        var listens: [ServerListen] = []
        var observers: [Int: Observer] = [:]
        var serverTimeOffset: Double = 0
        var lastSend = ContinuousClock.now
        var pushIDs = PushIDGenerator()
        /// The credential the connection authenticates with, sent first on every connection.
        var credential: String?
        var isConnected: Bool { lifecycle.connection != nil }
    }

    // MARK: Connection life

    /// Starts connecting if nothing is under way (and the user has not gone offline).
    func connect() {
        let id: Int? = state.withLock { state in
            guard case .waiting(let attempt) = state.lifecycle else { return nil }
            let id = state.nextConnectionID
            state.nextConnectionID += 1
            state.lifecycle = .connecting(id: id, attempt: attempt)
            state.assembler = FrameAssembler(maxMessageBytes: 1 << 28)
            return id
        }
        guard let id else { return }
        Task {
            do {
                _ = try await WebSocketConnection.open(
                    id: id, host: host, port: port, namespace: namespace, tls: tls,
                    onFrame: { [weak self] connection, text in self?.received(text, on: connection) },
                    onClose: { [weak self] id in self?.closed(id) })
            } catch {
                closed(id)
            }
        }
    }

    /// Stops the connection and retries until `goOnline`. Writes keep queueing locally.
    func goOffline() {
        state.withLock { state in
            let connection = state.lifecycle.connection
            dropConnection(&state, next: .offline)
            connection?.close()
        }
    }

    /// Connects again after `goOffline`.
    func goOnline() {
        let resume = state.withLock { state -> Bool in
            guard case .offline = state.lifecycle else { return false }
            state.lifecycle = .waiting(attempt: 0)
            return true
        }
        if resume { connect() }
    }

    /// The socket `id` closed or could not be opened.
    private func closed(_ id: Int) {
        let delay: Duration? = state.withLock { state in
            guard state.lifecycle.connectionID == id else { return nil }
            let attempt: Int
            if case .connecting(_, let failures) = state.lifecycle { attempt = failures + 1 } else { attempt = 0 }
            dropConnection(&state, next: .waiting(attempt: attempt))
            return Repo.backOff(attempt: attempt)
        }
        guard let delay else { return }
        Task { [weak self] in
            try? await Task.sleep(for: delay)
            self?.connect()
        }
    }

    /// The wait before reconnect attempt `attempt` (0 right after losing a good connection):
    /// 1 s growing by 1.3 per failure, capped at 30 s, then scaled by a random 50–100 % so that
    /// many clients dropped together do not all come back at the same instant.
    static func backOff(attempt: Int) -> Duration {
        let base = min(30, pow(1.3, Double(attempt)))
        return .milliseconds(Int(base * 1000 * Double.random(in: 0.5...1)))
    }

    /// Leaves the connected state: requests in flight are queued again (writes and listens are
    /// resent from their own lists on the next connect), and `.info/connected` turns false.
    private func dropConnection(_ state: inout State, next: ConnectionState) {
        let wasConnected = state.isConnected
        let requeued = state.inflight.sorted { $0.key < $1.key }.compactMap { entry -> QueuedRequest? in
            if case .request(let request) = entry.value { return request }
            return nil
        }
        state.queued = requeued + state.queued
        state.inflight = [:]
        state.lifecycle = next
        if wasConnected { raiseConnectedInfo(state) }
    }

    private func raiseConnectedInfo(_ state: State) {
        for observer in state.observers.values where observer.isConnectedInfo {
            raiseConnected(observer, connected: state.isConnected)
        }
    }

    private func raiseConnected(_ observer: Observer, connected: Bool) {
        let snapshot = DataSnapshot(path: Path(keys: [Key("connected")]), node: Node(.bool(connected)))
        let event = DataEvent(type: .value, snapshot: snapshot, previousSiblingKey: nil)
        let callback = observer.callback
        observer.queue.async { callback(event) }
    }

    // MARK: Receiving

    private func received(_ frame: String, on connection: WebSocketConnection) {
        state.withLock { state in
            guard state.lifecycle.connectionID == connection.id,
                case .message(let text)? = try? state.assembler.receive(frame),
                let message = try? JSONParser.parse(text)
            else { return }
            if message["t"]?.stringValue == "c" {
                guard let control = message["d"], control["t"]?.stringValue == "h" else { return }
                handshake(&state, control["d"] ?? .null, connection: connection)
            } else if let data = message["d"] {
                if let number = data["r"]?.numberValue {
                    response(&state, number: Int(number), body: data["b"] ?? .null)
                } else {
                    push(&state, action: data["a"]?.stringValue ?? "", body: data["b"] ?? .null)
                }
            }
        }
    }

    /// The server said hello: send every listen (with the hash of what is cached, so unchanged
    /// data is not sent again), then every unacknowledged write in order, then queued requests.
    private func handshake(_ state: inout State, _ body: JSONValue, connection: WebSocketConnection) {
        if let serverTime = body["ts"]?.numberValue {
            state.serverTimeOffset = serverTime - Date().timeIntervalSince1970 * 1000
        }
        state.lifecycle = .connected(connection)
        // The server decides every later request as whoever this says, so it goes first.
        if let credential = state.credential {
            send(&state, action: Repo.authAction(for: credential), body: .object([JSONMember("cred", .string(credential))]), pending: .request(QueuedRequest(action: "auth", body: .null) { _ in }))
        }
        for listen in state.listens { sendListen(&state, listen) }
        for write in state.writes {
            send(&state, action: write.action, body: write.body, pending: .write(writeID: write.writeID))
        }
        let queued = state.queued
        state.queued = []
        for request in queued { send(&state, action: request.action, body: request.body, pending: .request(request)) }
        raiseConnectedInfo(state)
        scheduleKeepAlive(connection)
    }

    /// Sends `0` when nothing has been sent for 45 s, so idle-closing proxies (and the server's
    /// 120 s idle timeout) never take a quiet connection for a dead one.
    private func scheduleKeepAlive(_ connection: WebSocketConnection) {
        connection.channel.eventLoop.scheduleTask(in: .seconds(45)) { [weak self] in
            guard let self else { return }
            let keepGoing = self.state.withLock { state -> Bool in
                guard state.lifecycle.connectionID == connection.id else { return false }
                if ContinuousClock.now - state.lastSend >= .seconds(44) {
                    connection.sendFrame("0")
                    state.lastSend = .now
                }
                return true
            }
            if keepGoing { self.scheduleKeepAlive(connection) }
        }
    }

    private func response(_ state: inout State, number: Int, body: JSONValue) {
        guard let pending = state.inflight.removeValue(forKey: number) else { return }
        let status = body["s"]?.stringValue ?? "ok"
        let data = body["d"] ?? .null
        let error: DatabaseError? =
            status == "ok" ? nil : .server(status: status, message: data.stringValue ?? JSONWriter.string(data))
        switch pending {
        case .write(let writeID):
            guard let index = state.writes.firstIndex(where: { $0.writeID == writeID }) else { return }
            let write = state.writes.remove(at: index)
            raise(state, state.syncTree.ackUserWrite(writeID: writeID, revert: error != nil))
            write.completion(error)
        case .listen(let listen):
            if error == nil {
                raise(state, state.syncTree.applyListenComplete(path: listen.path, tag: listen.tag))
            } else {
                state.listens.removeAll { $0 == listen }
                raise(&state, state.syncTree.cancelListen(path: listen.path, query: listen.query), cancelledBy: error)
                sendListenChanges(&state)
            }
        case .request(let request):
            request.completion(error.map { .failure($0) } ?? .success(data))
        }
    }

    /// Server data: `d` overwrites, `m` merges; a tag routes it to one filtered query. `c`: the
    /// server cancelled listens (read access lost); `ac`: the credential is no longer valid.
    private func push(_ state: inout State, action: String, body: JSONValue) {
        if action == "ac" {
            state.credential = nil
            return
        }
        guard let pathText = body["p"]?.stringValue, let path = try? Path(pathText) else { return }
        if action == "c" {
            let revoked = state.listens.filter { $0.path == path }
            state.listens.removeAll { $0.path == path }
            let error = DatabaseError.server(status: "permission_denied", message: "Client doesn't have permission to access the desired data.")
            for listen in revoked { raise(&state, state.syncTree.cancelListen(path: listen.path, query: listen.query), cancelledBy: error) }
            return
        }
        let tag = body["t"]?.numberValue.map { Int($0) }
        switch action {
        case "d":
            if path.last?.isPriority == true, let parent = path.parent {
                // A priority on its own: the cached node keeps its value and takes the priority.
                let current = state.syncTree.completeEventCache(at: parent)
                let priority = (try? Node(json: body["d"] ?? .null))?.leaf.flatMap(Priority.init)
                raise(state, state.syncTree.applyServerOverwrite(path: parent, node: current.withPriority(priority), tag: tag))
                return
            }
            guard let node = try? Node(json: body["d"] ?? .null, at: path) else { return }
            raise(state, state.syncTree.applyServerOverwrite(path: path, node: node, tag: tag))
        case "m":
            guard case .object(let members) = body["d"] ?? .null else { return }
            var changes: [(path: Path, node: Node)] = []
            for member in members {
                guard let relative = try? Path(member.key),
                    let node = try? Node(json: member.value, at: path.appending(relative))
                else { continue }
                changes.append((relative, node))
            }
            raise(state, state.syncTree.applyServerMerge(path: path, changes: changes, tag: tag))
        default:
            break
        }
    }

    // MARK: Sending

    /// Sends a request now if connected. Otherwise only plain requests are queued: writes and
    /// listens are resent from their own lists on connect.
    private func send(_ state: inout State, action: String, body: JSONValue, pending: Pending) {
        guard let connection = state.lifecycle.connection else {
            if case .request(let request) = pending { state.queued.append(request) }
            return
        }
        let number = state.nextRequest
        state.nextRequest += 1
        state.inflight[number] = pending
        let envelope = JSONValue.object([
            JSONMember("t", .string("d")),
            JSONMember(
                "d",
                .object([
                    JSONMember("r", .number(Double(number))), JSONMember("a", .string(action)), JSONMember("b", body),
                ])),
        ])
        connection.send(JSONWriter.string(envelope))
        state.lastSend = .now
    }

    private func sendListen(_ state: inout State, _ listen: ServerListen) {
        var members = [JSONMember("p", .string(listen.path.description))]
        if !listen.query.isDefault { members.append(JSONMember("q", listen.query.wireObject)) }
        if let tag = listen.tag { members.append(JSONMember("t", .number(Double(tag)))) }
        members.append(JSONMember("h", .string(state.syncTree.serverCacheHash(for: listen))))
        send(&state, action: "q", body: .object(members), pending: .listen(listen))
    }

    /// Starts and stops the server listens the sync tree asked for.
    private func sendListenChanges(_ state: inout State) {
        for change in state.syncTree.takeListenChanges() {
            switch change {
            case .start(let listen):
                state.listens.removeAll { $0.path == listen.path && $0.query.identifier == listen.query.identifier }
                state.listens.append(listen)
                sendListen(&state, listen)
            case .stop(let listen):
                state.listens.removeAll { $0.path == listen.path && $0.query.identifier == listen.query.identifier }
                var members = [JSONMember("p", .string(listen.path.description))]
                if !listen.query.isDefault { members.append(JSONMember("q", listen.query.wireObject)) }
                if let tag = listen.tag { members.append(JSONMember("t", .number(Double(tag)))) }
                let request = QueuedRequest(action: "n", body: .object(members), completion: { _ in })
                // An unlisten matters only to the current connection; a new one starts clean.
                if state.isConnected { send(&state, action: "n", body: request.body, pending: .request(request)) }
            }
        }
    }

    /// Hands the events of a listen the server refused or revoked to their observers: each
    /// observer's cancel callback runs once, and the observer is gone.
    private func raise(_ state: inout State, _ events: [Event], cancelledBy error: DatabaseError?) {
        for event in events where event.kind == .cancelled {
            guard let observer = state.observers.removeValue(forKey: event.registration.rawValue), let cancel = observer.cancel else { continue }
            let reason = error ?? .server(status: "permission_denied", message: "Client doesn't have permission to access the desired data.")
            observer.queue.async { cancel(reason) }
        }
        raise(state, events.filter { $0.kind != .cancelled })
    }

    /// Hands events to their observers' queues, in order.
    private func raise(_ state: State, _ events: [Event]) {
        for event in events {
            guard let observer = state.observers[event.registration.rawValue],
                observer.eventType.eventKind == event.kind
            else { continue }
            let path = event.childKey.map { event.path.child($0) } ?? event.path
            let snapshot = DataSnapshot(path: path, node: event.node, query: event.query)
            let dataEvent = DataEvent(
                type: observer.eventType, snapshot: snapshot, previousSiblingKey: event.previousSibling?.string)
            let callback = observer.callback
            observer.queue.async { callback(dataEvent) }
        }
    }

    // MARK: Operations

    /// The server's clock as best known: local time corrected by the handshake's offset.
    var estimatedServerTime: Double {
        state.withLock { Date().timeIntervalSince1970 * 1000 + $0.serverTimeOffset }
    }

    func nextPushID() -> Key {
        let now = Int64(estimatedServerTime)
        return state.withLock { state in
            var random = SystemRandomNumberGenerator()
            return state.pushIDs.next(timestamp: now, using: &random)
        }
    }

    func observe(
        path: Path, query: Query, eventType: DataEventType, queue: DispatchQueue,
        callback: @escaping @Sendable (DataEvent) -> Void, cancel: (@Sendable (DatabaseError) -> Void)? = nil
    ) -> Int {
        state.withLock { state in
            let id = state.nextRegistration
            state.nextRegistration += 1
            let observer = Observer(
                path: path, query: query, eventType: eventType, queue: queue, callback: callback,
                isConnectedInfo: false, cancel: cancel)
            state.observers[id] = observer
            raise(state, state.syncTree.addListen(path: path, query: query, registration: RegistrationID(id)))
            sendListenChanges(&state)
            return id
        }
    }

    /// Observes `.info/connected`: the current value at once, then every change.
    func observeConnected(queue: DispatchQueue, callback: @escaping @Sendable (DataEvent) -> Void) -> Int {
        state.withLock { state in
            let id = state.nextRegistration
            state.nextRegistration += 1
            let observer = Observer(
                path: .root, query: .all, eventType: .value, queue: queue, callback: callback, isConnectedInfo: true)
            state.observers[id] = observer
            raiseConnected(observer, connected: state.isConnected)
            return id
        }
    }

    func removeObserver(_ handle: Int) {
        state.withLock { state in
            guard let observer = state.observers.removeValue(forKey: handle), !observer.isConnectedInfo else { return }
            raise(
                state,
                state.syncTree.removeListen(path: observer.path, query: observer.query, registration: RegistrationID(handle)))
            sendListenChanges(&state)
        }
    }

    /// A local write: shown to observers at once, sent now or after the next connect.
    /// `local` builds the node the sync tree shows from what is there now.
    private func write(
        action: String, body: JSONValue, completion: @escaping @Sendable (DatabaseError?) -> Void,
        apply: (inout SyncTree, Int) throws -> [Event]
    ) {
        let failure: DatabaseError? = state.withLock { state in
            let writeID = state.nextWriteID
            let events: [Event]
            do {
                events = try apply(&state.syncTree, writeID)
            } catch {
                return .invalidArgument("\(error)")
            }
            state.nextWriteID += 1
            state.writes.append(PendingWrite(writeID: writeID, action: action, body: body, completion: completion))
            raise(state, events)
            send(&state, action: action, body: body, pending: .write(writeID: writeID))
            return nil
        }
        if let failure { completion(failure) }
    }

    func set(path: Path, value: JSONValue, completion: @escaping @Sendable (DatabaseError?) -> Void) {
        let serverValues = ServerValues(timestamp: estimatedServerTime)
        let body = JSONValue.object([JSONMember("p", .string(path.description)), JSONMember("d", value)])
        write(action: "p", body: body, completion: completion) { tree, writeID in
            let existing = tree.completeEventCache(at: path)
            let node = try Node(json: value, at: path, existing: existing, serverValues: serverValues)
            return tree.applyUserOverwrite(path: path, node: node, writeID: writeID)
        }
    }

    func update(path: Path, values: [(String, JSONValue)], completion: @escaping @Sendable (DatabaseError?) -> Void) {
        let serverValues = ServerValues(timestamp: estimatedServerTime)
        let body = JSONValue.object([
            JSONMember("p", .string(path.description)),
            JSONMember("d", .object(values.map { JSONMember($0.0, $0.1) })),
        ])
        write(action: "m", body: body, completion: completion) { tree, writeID in
            var changes: [(path: Path, node: Node)] = []
            for (relativeText, value) in values {
                let relative = try Path(relativeText)
                let full = path.appending(relative)
                let existing = tree.completeEventCache(at: full)
                changes.append((relative, try Node(json: value, at: full, existing: existing, serverValues: serverValues)))
            }
            return tree.applyUserMerge(path: path, changes: changes, writeID: writeID)
        }
    }

    func setPriority(path: Path, priority: JSONValue, completion: @escaping @Sendable (DatabaseError?) -> Void) {
        let body = JSONValue.object([
            JSONMember("p", .string(path.child(Key.priority).description)), JSONMember("d", priority),
        ])
        write(action: "p", body: body, completion: completion) { tree, writeID in
            let current = tree.completeEventCache(at: path)
            let parsed = try Node(json: priority).leaf.flatMap(Priority.init)
            return tree.applyUserOverwrite(path: path, node: current.withPriority(parsed), writeID: writeID)
        }
    }

    /// Authenticates the connection as `credential` (nil signs out), now and after every
    /// reconnect. Fails when the server refuses the credential.
    func authenticate(_ credential: String?) async throws(DatabaseError) {
        let connected = state.withLock { state -> Bool in
            state.credential = credential
            return state.isConnected
        }
        guard connected else { return }
        if let credential {
            _ = try await request(Repo.authAction(for: credential), .object([JSONMember("cred", .string(credential))]))
        } else {
            _ = try await request("unauth", .object([]))
        }
    }

    /// `auth` for a JWT (an ID token), `gauth` for anything else (an access token, an admin
    /// secret, the emulator's `owner`), as the SDKs choose.
    static func authAction(for credential: String) -> String {
        credential.split(separator: ".", omittingEmptySubsequences: false).count == 3 ? "auth" : "gauth"
    }

    /// Any request whose answer the caller awaits; queued while offline.
    func request(_ action: String, _ body: JSONValue) async throws(DatabaseError) -> JSONValue {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<JSONValue, DatabaseError>, Never>) in
            let request = QueuedRequest(action: action, body: body) { continuation.resume(returning: $0) }
            state.withLock { send(&$0, action: action, body: body, pending: .request(request)) }
        }
        return try result.get()
    }

    /// Reads once from the server.
    func get(path: Path, query: Query) async throws(DatabaseError) -> Node {
        var members = [JSONMember("p", .string(path.description))]
        if !query.isDefault { members.append(JSONMember("q", query.wireObject)) }
        let data = try await request("g", .object(members))
        do {
            return try Node(json: data, at: path)
        } catch {
            throw .invalidArgument("The server sent data the client cannot read: \(error)")
        }
    }

    /// Drops the socket abruptly (no close frame), as if the network or the process died; the
    /// repo reconnects as it would after any loss. For tests.
    func abortConnection() {
        state.withLock { $0.lifecycle.connection }?.abort()
    }

    /// Ends the connection for good (no reconnect) and fails what waits on it.
    func shutdown() {
        let (queued, writes) = state.withLock { state -> ([QueuedRequest], [PendingWrite]) in
            let connection = state.lifecycle.connection
            dropConnection(&state, next: .offline)
            connection?.close()
            defer {
                state.queued = []
                state.writes = []
            }
            return (state.queued, state.writes)
        }
        for request in queued { request.completion(.failure(.disconnected)) }
        for write in writes { write.completion(.disconnected) }
    }
}
