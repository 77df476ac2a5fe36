import Dispatch
import Foundation
import KindlingCore
import KindlingProtocol
import KindlingSync
import NIOCore
import NIOSSL
import Synchronization

/// The engine behind a `Database`: the thin shell around a `ConnectionStateMachine` that owns
/// the lock, the socket and the timers.
///
/// All state lives in one `Mutex`, and every change to it (a user call, a frame from the socket,
/// the socket closing) is one critical section that asks the state machine what to do and then
/// only *enqueues* the actions: frames onto the channel, events onto the observers' dispatch
/// queues, continuations. Those never block, so the lock is never held across a wait, and
/// because they are enqueued in the critical section their order is exactly the order of the
/// state changes. This is the "single serial owner" of the sync tree without the reentrancy and
/// ordering pitfalls of `await`ing an actor from synchronous APIs like `observe`.
final class Repo: Sendable {
    /// Where the server is; `useEmulator` may move it before the first use.
    private let endpoint: Mutex<(host: String, port: Int)>
    var host: String { endpoint.withLock { $0.host } }
    var port: Int { endpoint.withLock { $0.port } }
    let namespace: String
    /// Set for an `https://` database.
    let tls: NIOSSLContext?
    private let state = Mutex(State())
    /// The disk store when persistence is on.
    private let persistence = Mutex<PersistentStore?>(nil)

    private struct State: Sendable {
        var machine = ConnectionStateMachine()
        /// The socket whose handshake arrived; the machine says whether it is still current.
        var socket: WebSocketConnection?
    }

    init(host: String, port: Int, namespace: String, tls: NIOSSLContext? = nil) {
        self.endpoint = Mutex((host, port))
        self.namespace = namespace
        self.tls = tls
    }

    /// See `ConnectionStateMachine.backOff(attempt:)`.
    static func backOff(attempt: Int) -> Duration { ConnectionStateMachine.backOff(attempt: attempt) }

    // MARK: Performing the state machine's actions

    /// One critical section: `change` asks the machine, and its actions are carried out before
    /// the lock is released (all of them only enqueue work). Completions that run on no queue
    /// (resuming a caller, a write's completion block) run right after, outside the lock, so a
    /// completion block may call the database again.
    @discardableResult
    private func withMachine<Value: Sendable>(
        _ change: (inout ConnectionStateMachine, inout WebSocketConnection?) -> (Value, [ConnectionStateMachine.Action])
    ) -> Value {
        let (result, completions) = state.withLock { state -> (Value, [Delivery]) in
            let (result, actions) = change(&state.machine, &state.socket)
            var completions: [Delivery] = []
            for action in actions {
                if case .deliver(let delivery) = action, delivery.queue == nil {
                    completions.append(delivery)
                } else {
                    perform(action, socket: &state.socket)
                }
            }
            return (result, completions)
        }
        for completion in completions { completion.run() }
        return result
    }

    private func perform(_ action: ConnectionStateMachine.Action, socket: inout WebSocketConnection?) {
        switch action {
        case .open(let id):
            ClientLog.log("connecting to \(host):\(port) (connection \(id), namespace \(namespace))")
            Task { await open(id) }
        case .send(let id, let message):
            if let socket, socket.id == id {
                ClientLog.log("sent \(ClientLog.frame(message))")
                socket.send(message)
            }
        case .close(let id, _):
            if let current = socket, current.id == id {
                current.close()
                socket = nil
            }
        case .reconnect(let delay):
            Task { [weak self] in
                try? await Task.sleep(for: delay)
                self?.connect()
            }
        case .keepAlive(let id):
            if let socket, socket.id == id { scheduleKeepAlive(socket) }
        case .deliver(let delivery):
            delivery.run()
        case .expire(let request, let delay):
            Task { [weak self] in
                try? await Task.sleep(for: delay)
                self?.withMachine { machine, _ in ((), machine.expire(request)) }
            }
        }
    }

    private func open(_ id: Int) async {
        do {
            _ = try await WebSocketConnection.open(
                id: id, host: host, port: port, namespace: namespace, tls: tls,
                onFrame: { [weak self] connection, text in self?.received(text, on: connection) },
                onClose: { [weak self] id in self?.closed(id) })
        } catch {
            closed(id)
        }
    }

    private func received(_ frame: String, on connection: WebSocketConnection) {
        ClientLog.log("received \(ClientLog.frame(frame))")
        withMachine { machine, socket in
            // The frame names its socket; when it is the current one, that is where requests go.
            if machine.lifecycle.connectionID == connection.id { socket = connection }
            return ((), machine.received(frame, on: connection.id))
        }
    }

    /// The socket `id` closed or could not be opened.
    private func closed(_ id: Int) {
        ClientLog.log("connection \(id) closed")
        withMachine { machine, socket in
            if socket?.id == id { socket = nil }
            return ((), machine.closed(id))
        }
    }

    /// Sends `0` when nothing has been sent for 45 s, so idle-closing proxies (and the server's
    /// 120 s idle timeout) never take a quiet connection for a dead one.
    private func scheduleKeepAlive(_ connection: WebSocketConnection) {
        connection.channel.eventLoop.scheduleTask(in: .seconds(45)) { [weak self] in
            guard let self else { return }
            let due = self.state.withLock { $0.machine.keepAliveDue(on: connection.id, after: .seconds(44)) }
            guard let due else { return }
            if due { connection.sendFrame("0") }
            self.scheduleKeepAlive(connection)
        }
    }

    // MARK: Connection life

    /// Starts connecting if nothing is under way (and the user has not gone offline).
    func connect() { withMachine { machine, _ in ((), machine.connect()) } }

    /// Stops the connection and retries until `goOnline`. Writes keep queueing locally.
    func goOffline() { withMachine { machine, _ in ((), machine.goOffline()) } }

    /// Connects again after `goOffline`.
    func goOnline() { withMachine { machine, _ in ((), machine.goOnline()) } }

    /// Drops the socket abruptly (no close frame), as if the network or the process died; the
    /// repo reconnects as it would after any loss. For tests.
    func abortConnection() {
        state.withLock { $0.socket }?.abort()
    }

    /// Ends the connection for good (no reconnect) and fails what waits on it.
    func shutdown() {
        flushCache()
        persistence.withLock { store in
            store?.close()
            store = nil
        }
        withMachine { machine, _ in ((), machine.shutdown()) }
    }

    /// Drops every write the server has not acknowledged (Firebase's `purgeOutstandingWrites`).
    func purgeWrites() { withMachine { machine, _ in ((), machine.purgeWrites()) } }

    // MARK: Persistence

    /// Turns persistence on with `store`: the writes it kept are made again, in order (shown at
    /// once, sent on the connection), and listens start from the data it kept. Only before any
    /// other use, as in Firebase: false when the database was already used.
    func enablePersistence(_ store: PersistentStore) -> Bool {
        let fresh = state.withLock { state in
            guard state.machine.engine.observers.isEmpty, state.machine.engine.writes.isEmpty else { return false }
            state.machine.seedServerData { path, queryID in store.cached(path: path, queryID: queryID) }
            return true
        }
        guard fresh,
            persistence.withLock({ current in
                guard current == nil else { return false }
                current = store
                return true
            })
        else { return false }
        for write in store.pendingWrites { remake(write) }
        Task.detached { [weak self] in
            while let repo = self, repo.persistence.withLock({ $0 != nil }) {
                try? await Task.sleep(for: .seconds(1))
                self?.flushCache()
            }
        }
        return true
    }

    /// Makes a write kept from an earlier run again; one that no longer applies is forgotten.
    private func remake(_ write: PersistentStore.PendingWrite) {
        let forget: @Sendable (DatabaseError?) -> Void = { _ in }
        switch write.action {
        case .put(let path, let data, nil) where path.last == Key.priority:
            setPriority(path: path.parent ?? .root, priority: data, recorded: write.token, completion: forget)
        case .put(let path, let data, nil):
            set(path: path, value: data, recorded: write.token, completion: forget)
        case .merge(let path, let members):
            update(path: path, values: members.map { ($0.key, $0.value) }, recorded: write.token, completion: forget)
        default:
            persistence.withLock { $0 }?.acknowledge(write.token)
        }
    }

    /// Writes the server data of every listen to the store where it changed.
    func flushCache() {
        guard let store = persistence.withLock({ $0 }) else { return }
        let entries = state.withLock { state -> [(path: Path, queryID: String, node: Node)] in
            let engine = state.machine.engine
            return engine.listens.compactMap { listen in
                engine.syncTree.serverValue(at: listen.path, query: listen.query).map { (listen.path, listen.query.identifier, $0) }
            }
        }
        store.store(entries, active: Set(entries.map { PersistentStore.key(path: $0.path, queryID: $0.queryID) }))
    }

    /// Moves the database to the server at `host`:`port` (Firebase's `useEmulator`): only
    /// before any other use; false after it. A connection under way starts again there.
    func retarget(host: String, port: Int) -> Bool {
        let fresh = state.withLock { $0.machine.engine.observers.isEmpty && $0.machine.engine.writes.isEmpty }
        guard fresh else { return false }
        endpoint.withLock { $0 = (host, port) }
        withMachine { machine, _ in ((), machine.goOffline() + machine.goOnline()) }
        return true
    }

    /// Whether persistence is on.
    var isPersistent: Bool { persistence.withLock { $0 != nil } }

    /// The listens the server holds for this client and the observers registered, for tests that
    /// check an observer's end reached the wire.
    var listenCounts: (server: Int, observers: Int) {
        state.withLock { ($0.machine.engine.listens.count, $0.machine.engine.observers.count) }
    }

    // MARK: Operations

    /// The server's clock as best known: local time corrected by the handshake's offset.
    var estimatedServerTime: Double { state.withLock { $0.machine.estimatedServerTime() } }

    func nextPushID() -> Key { state.withLock { $0.machine.nextPushID() } }

    func observe(
        path: Path, query: Query, eventType: DataEventType, queue: DispatchQueue,
        callback: @escaping @Sendable (DataEvent) -> Void, cancel: (@Sendable (DatabaseError) -> Void)? = nil
    ) -> Int {
        withMachine { machine, _ in
            machine.observe(path: path, query: query, eventType: eventType, queue: queue, callback: callback, cancel: cancel)
        }
    }

    /// Observes `.info/connected`: the current value at once, then every change.
    func observeInfo(_ info: InfoPath, queue: DispatchQueue, callback: @escaping @Sendable (DataEvent) -> Void) -> Int {
        withMachine { machine, _ in machine.observeInfo(info, queue: queue, callback: callback) }
    }

    func removeObserver(_ handle: Int) { withMachine { machine, _ in ((), machine.removeObserver(handle)) } }

    /// Removes, in one step, the observers at `path` of `query` (of every query when nil).
    func removeObservers(path: Path, query: Query?, info: InfoPath?) {
        withMachine { machine, _ in
            let handles = machine.engine.observers.filter { _, observer in
                observer.info == info && observer.path == path && (query == nil || observer.query == query)
            }.keys.sorted()
            return ((), handles.flatMap { machine.removeObserver($0) })
        }
    }

    /// A local write: shown to observers at once, sent now or after the next connect.
    /// `apply` builds the sync tree's change from what is there now.
    /// With persistence on, the write is recorded on disk first (`recorded`: it already was,
    /// in an earlier run) and forgotten there once the server has answered it; a database
    /// shut down before that keeps it for the next run.
    private func write(
        _ action: KindlingProtocol.Action, recorded: Int? = nil, completion: @escaping @Sendable (DatabaseError?) -> Void,
        apply: (inout SyncTree, Int) throws -> [Event]
    ) {
        let store = persistence.withLock { $0 }
        let failure: DatabaseError? = withMachine { machine, _ in
            // Recorded inside the critical section, so the log has the writes in the order sent.
            let token = recorded ?? store?.record(action)
            let done: @Sendable (DatabaseError?) -> Void = { error in
                if let token, error != .disconnected { store?.acknowledge(token) }
                completion(error)
            }
            do throws(DatabaseError) {
                return (nil, try machine.write(action, completion: done, apply: apply))
            } catch {
                if let token { store?.acknowledge(token) }
                return (error, [])
            }
        }
        if let failure { completion(failure) }
    }

    func set(path: Path, value: JSONValue, recorded: Int? = nil, completion: @escaping @Sendable (DatabaseError?) -> Void) {
        let serverValues = ServerValues(timestamp: estimatedServerTime)
        write(.put(path: path, data: value, hash: nil), recorded: recorded, completion: completion) { tree, writeID in
            let existing = tree.completeEventCache(at: path)
            let node = try Node(json: value, at: path, existing: existing, serverValues: serverValues)
            return tree.applyUserOverwrite(path: path, node: node, writeID: writeID)
        }
    }

    func update(
        path: Path, values: [(String, JSONValue)], recorded: Int? = nil, completion: @escaping @Sendable (DatabaseError?) -> Void
    ) {
        let serverValues = ServerValues(timestamp: estimatedServerTime)
        write(.merge(path: path, data: values.map { JSONMember($0.0, $0.1) }), recorded: recorded, completion: completion) { tree, writeID in
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

    func setPriority(path: Path, priority: JSONValue, recorded: Int? = nil, completion: @escaping @Sendable (DatabaseError?) -> Void) {
        write(.put(path: path.child(Key.priority), data: priority, hash: nil), recorded: recorded, completion: completion) { tree, writeID in
            let current = tree.completeEventCache(at: path)
            let parsed = try Node(json: priority).leaf.flatMap(Priority.init)
            return tree.applyUserOverwrite(path: path, node: current.withPriority(parsed), writeID: writeID)
        }
    }

    /// Authenticates the connection as `credential` (nil signs out), now and after every
    /// reconnect. Fails when the server refuses the credential, when no connection comes within
    /// the connect timeout to decide it, or when the task is cancelled.
    func authenticate(_ credential: String?) async throws(DatabaseError) {
        _ = try await awaitAnswer(operation: ("authenticate", "/")) { machine, id, completion in
            machine.authenticate(credential, id: id, completion: completion)
        }
    }

    /// Any request whose answer the caller awaits; queued while offline. `expiresOffline` (a
    /// read) fails as offline when no connection takes it in time. A cancelled task stops
    /// waiting at once.
    func request(_ action: KindlingProtocol.Action, expiresOffline: Bool = false) async throws(DatabaseError) -> JSONValue {
        try await awaitAnswer(operation: action.operation) { machine, id, completion in
            machine.request(action, id: id, expiresOffline: expiresOffline, completion: completion)
        }
    }

    /// Registers a caller with the state machine (`register` gets its id and completion) and
    /// waits for the answer, or until the task is cancelled.
    private func awaitAnswer(
        operation: (name: String, path: String),
        _ register:
            @escaping (inout ConnectionStateMachine, Int, @escaping @Sendable (Result<JSONValue, DatabaseError>) -> Void) ->
            [ConnectionStateMachine.Action]
    ) async throws(DatabaseError) -> JSONValue {
        let id = state.withLock { $0.machine.reserveCallerID() }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<JSONValue, DatabaseError>, Never>) in
                let completion: @Sendable (Result<JSONValue, DatabaseError>) -> Void = { continuation.resume(returning: $0) }
                withMachine { machine, _ in
                    // Checked in the critical section `cancel` also takes: a cancellation is
                    // seen here or finds the caller registered, never neither.
                    if Task.isCancelled {
                        let cancelled = DatabaseError.cancelled(operation: operation.name, path: operation.path)
                        return ((), [.deliver(Delivery(queue: nil) { completion(.failure(cancelled)) })])
                    }
                    return ((), register(&machine, id, completion))
                }
            }
        } onCancel: {
            self.withMachine { machine, _ in ((), machine.cancel(id)) }
        }
        return try result.get()
    }

    /// Reads once: from a listener's cache when one holds all of it (as the Firebase SDKs
    /// answer), else from the server; offline past the connect timeout, from the cache if a
    /// listener has filled it meanwhile, else the read fails as offline.
    /// `fromCache` false asks the server even when a listener holds the data (a transaction
    /// retried after the server found its data stale).
    func get(path: Path, query: Query, fromCache: Bool = true) async throws(DatabaseError) -> Node {
        if fromCache, let cached = cachedServerValue(path: path, query: query) { return cached }
        let data: JSONValue
        do {
            data = try await request(.get(path: path, query: query), expiresOffline: true)
        } catch {
            if case .offline = error, let cached = cachedServerValue(path: path, query: query) { return cached }
            throw error
        }
        do {
            return try Node(json: data, at: path)
        } catch {
            throw .invalidArgument("The server sent data the client cannot read: \(error)")
        }
    }

    /// The client's own `info` value now.
    func infoValue(_ info: InfoPath) -> JSONValue { state.withLock { $0.machine.infoValue(info) } }

    private func cachedServerValue(path: Path, query: Query) -> Node? {
        state.withLock { $0.machine.engine.syncTree.serverValue(at: path, query: query) }
    }
}
