import Dispatch
import KindlingCore
import KindlingProtocol
import KindlingSync

/// The client's data: the sync tree, the writes the server has not acknowledged, the server
/// listens the tree wants, and the observers. Pure state, no I/O: every change returns the
/// requests to send and the callbacks to run, and the connection state machine carries them out.
struct SyncEngine: Sendable {
    /// What a change asks for: a request to the server, or a callback to run.
    enum Effect: Sendable {
        case send(Action, PendingRequest)
        case deliver(Delivery)
    }

    private(set) var syncTree = SyncTree()
    private(set) var writes: [PendingWrite] = []
    /// The server listens the sync tree wants, in the order they were started.
    private(set) var listens: [ServerListen] = []
    private(set) var observers: [Int: Observer] = [:]
    private var nextWriteID = 1
    private var nextRegistration = 1
    private var pushIDs = PushIDGenerator()
    /// Server data kept from an earlier run, by location and query identifier: a listen starts
    /// from it, so observers see data at once, offline too.
    var seed: (@Sendable (Path, String) -> Node?)?

    static let permissionDenied = DatabaseError.server(
        status: WireStatus.permissionDenied.rawValue, message: "Client doesn't have permission to access the desired data.")

    // MARK: Connection events

    /// A new connection is up: every listen again (with the hash of what is cached, so unchanged
    /// data is not sent again), then every unacknowledged write, in order.
    func resend(into effects: inout [Effect]) {
        for listen in listens { effects.append(listenRequest(listen)) }
        for write in writes { effects.append(.send(write.action, .write(writeID: write.writeID))) }
    }

    /// Tells the observers of `info` its new value.
    func infoChanged(_ info: InfoPath, to value: JSONValue, into effects: inout [Effect]) {
        for observer in observers.values where observer.info == info {
            effects.append(Self.infoEvent(observer, info: info, value: value))
        }
    }

    private static func infoEvent(_ observer: Observer, info: InfoPath, value: JSONValue) -> Effect {
        let snapshot = DataSnapshot(path: info.path, node: (try? Node(json: value)) ?? .empty)
        let event = DataEvent(type: .value, snapshot: snapshot, previousSiblingKey: nil)
        let callback = observer.callback
        return .deliver(Delivery(queue: observer.queue) { callback(event) })
    }

    // MARK: Server messages

    /// The server answered a write or a listen (plain requests are answered by the caller's
    /// completion, which the state machine runs itself).
    mutating func answer(_ pending: PendingRequest, error: DatabaseError?, data: JSONValue, into effects: inout [Effect]) {
        switch pending {
        case .write(let writeID):
            guard let index = writes.firstIndex(where: { $0.writeID == writeID }) else { return }
            let write = writes.remove(at: index)
            raise(syncTree.ackUserWrite(writeID: writeID, revert: error != nil), into: &effects)
            effects.append(.deliver(Delivery(queue: nil) { write.completion(error) }))
        case .listen(let listen):
            if error == nil {
                raise(syncTree.applyListenComplete(path: listen.path, tag: listen.tag), into: &effects)
            } else {
                listens.removeAll { $0 == listen }
                raise(syncTree.cancelListen(path: listen.path, query: listen.query), cancelledBy: error, into: &effects)
                listenChanges(connected: true, into: &effects)
            }
        case .request(let request):
            let result: Result<JSONValue, DatabaseError> = error.map { .failure($0) } ?? .success(data)
            effects.append(.deliver(Delivery(queue: nil) { request.completion(result) }))
        case .auth:
            // The state machine decides its authentication itself.
            break
        }
    }

    /// Server data: an overwrite or merge (a tag routes it to one filtered query), or revoked
    /// listens. Data the client cannot hold is a protocol error: the connection is dropped
    /// rather than the cache left half updated.
    mutating func apply(_ push: ServerPush, into effects: inout [Effect]) throws(ProtocolError) {
        switch push {
        case .overwrite(let path, let data, let tag):
            // A priority on its own (`…/.priority`) is a leaf at exactly that path: the views set
            // it on their server caches, never rebuilding the parent from what the user sees.
            let node = try Self.node(data, at: path.last?.isPriority == true ? nil : path)
            raise(syncTree.applyServerOverwrite(path: path, node: node, tag: tag), into: &effects)
        case .merge(let path, let members, let tag):
            var changes: [(path: Path, node: Node)] = []
            for member in members {
                let relative: Path
                do throws(ValidationError) {
                    relative = try Path(member.key)
                } catch {
                    throw ProtocolError(.invalidRequest, "Merge path: \(error.message)", validation: error)
                }
                changes.append((relative, try Self.node(member.value, at: path.appending(relative))))
            }
            raise(syncTree.applyServerMerge(path: path, changes: changes, tag: tag), into: &effects)
        case .listenRevoked(let path, let query):
            // Keyed by path and query identifier like every other listen: only the revoked
            // query's observers are cancelled, the other queries at the path keep going.
            let queryIDs = try Self.revokedQueryIDs(query)
            let revoked = listens.filter { $0.path == path && queryIDs.contains($0.query.identifier) }
            listens.removeAll { revoked.contains($0) }
            for listen in revoked {
                raise(syncTree.cancelListen(path: listen.path, query: listen.query), cancelledBy: nil, into: &effects)
            }
            // Filtered queries the revoked default listen served need listens of their own.
            listenChanges(connected: true, into: &effects)
        case .authRevoked, .unknown:
            break
        }
    }

    /// The identifiers of the queries a revocation names: its `q` is an array of the query
    /// objects the client sent (the JS SDK's form; a bare object is taken too), and without `q`
    /// it is the default query.
    private static func revokedQueryIDs(_ query: JSONValue?) throws(ProtocolError) -> Set<String> {
        let objects: [JSONValue]
        switch query {
        case nil: return [Query.all.identifier]
        case .array(let elements)?: objects = elements
        case .object(let members)?: objects = [.object(members)]
        case let other?: throw ProtocolError(.malformedMessage, "Revoked query \"q\" is not a query: \(JSONWriter.string(other))")
        }
        var identifiers: Set<String> = []
        for object in objects {
            do throws(ValidationError) {
                identifiers.insert(try Query(wire: object).identifier)
            } catch {
                throw ProtocolError(.invalidRequest, "Revoked query: \(error.message)", validation: error)
            }
        }
        return identifiers
    }

    private static func node(_ json: JSONValue, at path: Path?) throws(ProtocolError) -> Node {
        do throws(ValidationError) {
            guard let path else { return try Node(json: json) }
            return try Node(json: json, at: path)
        } catch {
            throw ProtocolError(.invalidRequest, "Server data: \(error.message)", validation: error)
        }
    }

    // MARK: Observers

    /// Registers an observer; the events already known are raised at once.
    mutating func observe(
        path: Path, query: Query, eventType: DataEventType, queue: DispatchQueue,
        callback: @escaping @Sendable (DataEvent) -> Void, cancel: (@Sendable (DatabaseError) -> Void)?,
        connected: Bool, into effects: inout [Effect]
    ) -> Int {
        let id = nextRegistration
        nextRegistration += 1
        observers[id] = Observer(
            path: path, query: query, eventType: eventType, queue: queue, callback: callback, info: nil,
            cancel: cancel)
        raise(syncTree.addListen(path: path, query: query, registration: RegistrationID(id)), into: &effects)
        listenChanges(connected: connected, into: &effects)
        return id
    }

    /// Observes the client's own `info`: `value`, its value now, at once, then every change.
    mutating func observeInfo(
        _ info: InfoPath, value: JSONValue, queue: DispatchQueue, callback: @escaping @Sendable (DataEvent) -> Void, into effects: inout [Effect]
    ) -> Int {
        let id = nextRegistration
        nextRegistration += 1
        let observer = Observer(path: .root, query: .all, eventType: .value, queue: queue, callback: callback, info: info, cancel: nil)
        observers[id] = observer
        effects.append(Self.infoEvent(observer, info: info, value: value))
        return id
    }

    mutating func removeObserver(_ handle: Int, connected: Bool, into effects: inout [Effect]) {
        guard let observer = observers.removeValue(forKey: handle), observer.info == nil else { return }
        raise(
            syncTree.removeListen(path: observer.path, query: observer.query, registration: RegistrationID(handle)),
            into: &effects)
        listenChanges(connected: connected, into: &effects)
    }

    // MARK: Writes

    /// A local write: shown to observers at once, sent now or after the next connect. `apply`
    /// builds the sync tree's change from what is there now; when it throws, nothing changes.
    mutating func write(
        _ action: Action, completion: @escaping @Sendable (DatabaseError?) -> Void,
        into effects: inout [Effect], apply: (inout SyncTree, Int) throws -> [Event]
    ) throws(DatabaseError) {
        let writeID = nextWriteID
        let events: [Event]
        do {
            events = try apply(&syncTree, writeID)
        } catch {
            throw .invalidArgument("\(error)")
        }
        nextWriteID += 1
        writes.append(PendingWrite(writeID: writeID, action: action, completion: completion))
        raise(events, into: &effects)
        effects.append(.send(action, .write(writeID: writeID)))
    }

    mutating func nextPushID(timestamp: Int64) -> Key {
        var random = SystemRandomNumberGenerator()
        return pushIDs.next(timestamp: timestamp, using: &random)
    }

    /// Everything waiting on the server, taken out for failing when the database shuts down.
    mutating func takeWrites() -> [PendingWrite] {
        defer { writes = [] }
        return writes
    }

    /// Drops every write the server has not acknowledged, as Firebase's `purgeOutstandingWrites`:
    /// each is undone locally (listeners see the server's data again) and its completion gets
    /// `cancelled`. One already sent may still be applied by the server; its answer is ignored.
    mutating func purgeWrites(into effects: inout [Effect]) {
        for write in takeWrites() {
            raise(syncTree.ackUserWrite(writeID: write.writeID, revert: true), into: &effects)
            let operation = write.action.operation
            let error = DatabaseError.cancelled(operation: operation.name, path: operation.path)
            effects.append(.deliver(Delivery(queue: nil) { write.completion(error) }))
        }
    }

    // MARK: Listens and events

    private func listenRequest(_ listen: ServerListen) -> Effect {
        let request = ListenRequest(
            path: listen.path, query: listen.query, tag: listen.tag, hash: syncTree.serverCacheHash(for: listen))
        return .send(.listen(request), .listen(listen))
    }

    /// Starts and stops the server listens the sync tree asked for. An unlisten matters only to
    /// the current connection (a new one starts clean), so it is sent only when `connected`.
    private mutating func listenChanges(connected: Bool, into effects: inout [Effect]) {
        for change in syncTree.takeListenChanges() {
            switch change {
            case .start(let listen):
                listens.removeAll { $0.path == listen.path && $0.query.identifier == listen.query.identifier }
                listens.append(listen)
                // Kept data stands in only where nothing fresher is known: never over the data a
                // listen of this session already has for the location.
                if syncTree.serverValue(at: listen.path, query: listen.query) == nil, let kept = seed?(listen.path, listen.query.identifier) {
                    raise(syncTree.applyServerOverwrite(path: listen.path, node: kept, tag: listen.tag), into: &effects)
                    raise(syncTree.applyListenComplete(path: listen.path, tag: listen.tag), into: &effects)
                }
                effects.append(listenRequest(listen))
            case .stop(let listen):
                listens.removeAll { $0.path == listen.path && $0.query.identifier == listen.query.identifier }
                let request = QueuedRequest(action: .unlisten(path: listen.path, query: listen.query)) { _ in }
                if connected { effects.append(.send(request.action, .request(request))) }
            }
        }
    }

    /// Hands the events of a listen the server refused or revoked to their observers: each
    /// observer's cancel callback runs once, and the observer is gone.
    private mutating func raise(_ events: [Event], cancelledBy error: DatabaseError?, into effects: inout [Effect]) {
        for event in events where event.kind == .cancelled {
            guard let observer = observers.removeValue(forKey: event.registration.rawValue), let cancel = observer.cancel else {
                continue
            }
            let reason = error ?? Self.permissionDenied
            effects.append(.deliver(Delivery(queue: observer.queue) { cancel(reason) }))
        }
        raise(events.filter { $0.kind != .cancelled }, into: &effects)
    }

    /// Hands events to their observers' queues, in order.
    private func raise(_ events: [Event], into effects: inout [Effect]) {
        for event in events {
            guard let observer = observers[event.registration.rawValue], observer.eventType.eventKind == event.kind else { continue }
            let path = event.childKey.map { event.path.child($0) } ?? event.path
            let snapshot = DataSnapshot(path: path, node: event.node, query: event.query)
            let dataEvent = DataEvent(type: observer.eventType, snapshot: snapshot, previousSiblingKey: event.previousSibling?.string)
            let callback = observer.callback
            effects.append(.deliver(Delivery(queue: observer.queue) { callback(dataEvent) }))
        }
    }
}
