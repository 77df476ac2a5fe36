import KindlingCore
import KindlingProtocol

/// Everything one namespace (one database) knows, and the handling of every realtime request,
/// as a pure value: no I/O and no clock (the caller passes the time). The server runs it on the
/// namespace's one serial queue.
///
/// Ordering guarantees come from the order of the outputs: data for a listen before its `ok`, and
/// a write's changes to every affected listener (the writer included) before the writer's `ok`.
struct NamespaceState: Sendable {
    struct ConnectionRecord: Sendable {
        var auth: AuthState = .anonymous
        var onDisconnect = OnDisconnectQueue()
    }

    let name: String
    /// Written only by this type and its extensions (realtime and REST handling).
    var database = DatabaseState<ConnectionID>()
    private(set) var connections: [ConnectionID: ConnectionRecord] = [:]
    /// REST event streams and the location each listens to: their deliveries are encoded as
    /// server-sent events relative to it instead of realtime messages. Streams are subscribers of
    /// the same `DatabaseState` as WebSocket listens, so both see the same writes in one order.
    var streams: [ConnectionID: Path] = [:]
    private var pushIDs = PushIDGenerator()

    /// The writes committed since the owner last took them, in order, for the log.
    private var journal: [Write] = []

    init(name: String, root: Node = .empty) {
        self.name = name
        self.database = DatabaseState(root: root)
    }

    /// Hands over the writes committed since the last call.
    mutating func takeJournal() -> [Write] {
        defer { journal = [] }
        return journal
    }

    mutating func connect(_ connection: ConnectionID) {
        connections[connection] = ConnectionRecord()
    }

    /// Handles one request and appends what must be sent.
    mutating func handle(_ request: Request, from connection: ConnectionID, now: Int64, into out: inout [Outgoing]) {
        let clock = ServerValues(timestamp: Double(now))
        do throws(ValidationError) {
            switch request.action {
            case .stats, .appCheck, .unappCheck:
                respond(request, to: connection, into: &out)
            case .auth(let auth):
                authenticate(auth, request, connection, &out)
            case .unauth:
                connections[connection]?.auth = .anonymous
                respond(request, to: connection, into: &out)
            case .listen(let listen):
                let tag = listen.query.loadsAllData ? nil : listen.tag
                let delivery = database.listen(connection, at: listen.path, query: listen.query, tag: tag)
                if case .put(_, let node) = delivery.change, !listen.hash.isEmpty, node.matchesHash(listen.hash) {
                    // The client already holds exactly this data: acknowledge without resending it.
                } else {
                    out.append(contentsOf: encode([delivery]))
                }
                respond(request, to: connection, into: &out)
            case .unlisten(let path, let query):
                database.unlisten(connection, at: path, query: query)
                respond(request, to: connection, into: &out)
            case .put(let path, let data, let hash):
                if let hash, !database.tree.matches(hash: hash, at: path) {
                    fail(request, .dataStale, "The data at \(path) changed since the transaction read it", to: connection, into: &out)
                    return
                }
                commit(try database.tree.resolveSet(path, data, serverValues: clock), into: &out)
                respond(request, to: connection, into: &out)
            case .merge(let path, let members):
                commit(try database.tree.resolveUpdate(path, members, serverValues: clock), into: &out)
                respond(request, to: connection, into: &out)
            case .onDisconnectPut(let path, let data):
                _ = try database.tree.resolveSet(path, data, serverValues: clock)
                connections[connection]?.onDisconnect.append(.put(path, data))
                respond(request, to: connection, into: &out)
            case .onDisconnectMerge(let path, let members):
                _ = try database.tree.resolveUpdate(path, members, serverValues: clock)
                connections[connection]?.onDisconnect.append(.merge(path, members))
                respond(request, to: connection, into: &out)
            case .onDisconnectCancel(let path):
                connections[connection]?.onDisconnect.cancel(at: path)
                respond(request, to: connection, into: &out)
            case .get(let path, let query):
                respond(request, to: connection, data: ServerMessage.data(database.read(path, query: query)), into: &out)
            case .getInfo:
                // `.info` lives in the client (connected state, clock offset); the server holds none of it.
                respond(request, to: connection, data: Array("null".utf8), into: &out)
            case .echo(let data):
                respond(request, to: connection, data: Array(JSONWriter.string(data).utf8), into: &out)
            case .unknown(let action):
                fail(request, .unknownAction, "Unknown action \(ValidationError.quoted(action))", to: connection, into: &out)
            }
        } catch {
            fail(request, WireStatus(error), error.message, to: connection, into: &out)
        }
    }

    /// Applies a resolved write (from any source) and appends the changes for its listeners.
    mutating func commit(_ write: Write, into out: inout [Outgoing]) {
        journal.append(write)
        out.append(contentsOf: encode(database.commit(write)))
    }

    /// Forgets a connection: its listens go, then its queued onDisconnect writes run, in order,
    /// with server values resolved now, and their changes go to the remaining listeners.
    mutating func disconnect(_ connection: ConnectionID, now: Int64, into out: inout [Outgoing]) -> [String] {
        database.removeSubscriber(connection)
        guard var record = connections.removeValue(forKey: connection) else { return [] }
        let clock = ServerValues(timestamp: Double(now))
        var problems: [String] = []
        for operation in record.onDisconnect.drain() {
            do throws(ValidationError) {
                switch operation {
                case .put(let path, let data): commit(try database.tree.resolveSet(path, data, serverValues: clock), into: &out)
                case .merge(let path, let members): commit(try database.tree.resolveUpdate(path, members, serverValues: clock), into: &out)
                }
            } catch {
                problems.append("onDisconnect write at \(operation.path) failed: \(error.message)")
            }
        }
        return problems
    }

    /// A fresh push id for a write committed at `now`.
    mutating func nextPushID(now: Int64) -> Key {
        var random = SystemRandomNumberGenerator()
        return pushIDs.next(timestamp: now, using: &random)
    }

    private mutating func authenticate(_ auth: AuthRequest, _ request: Request, _ connection: ConnectionID, _ out: inout [Outgoing]) {
        guard var state = AuthState.from(credential: auth.credential, isGoogleToken: auth.isGoogleToken) else {
            fail(request, .invalidToken, "Could not parse auth token.", to: connection, into: &out)
            return
        }
        if state == .admin, auth.noAuth {
            state = .anonymous
        } else if state == .admin, let override = auth.authOverride, case .object = override {
            state = .user(claims: override)
        }
        connections[connection]?.auth = state
        var writer = JSONWriter()
        writer.write(.object([JSONMember("auth", state.ruleValue), JSONMember("expires", state.expiry)]))
        respond(request, to: connection, data: writer.bytes, into: &out)
    }

    private func respond(_ request: Request, to connection: ConnectionID, data: [UInt8]? = nil, into out: inout [Outgoing]) {
        guard let number = request.number else { return }
        out.append(Outgoing(recipients: [connection], message: ServerMessage.response(number, status: .ok, data: data)))
    }

    private func fail(_ request: Request, _ status: WireStatus, _ message: String, to connection: ConnectionID, into out: inout [Outgoing]) {
        guard let number = request.number else { return }
        out.append(Outgoing(recipients: [connection], message: ServerMessage.failure(number, status: status, message: message)))
    }

    /// Encodes deliveries: for realtime connections each change's data once and each envelope
    /// once per tag; for event streams the events once per listened location.
    func encode(_ deliveries: [Delivery<ConnectionID>]) -> [Outgoing] {
        var out: [Outgoing] = []
        for delivery in deliveries {
            if streams.isEmpty, delivery.recipients.allSatisfy({ $0.tag == nil }) {
                // The common case, plain listens on realtime connections: one envelope for all,
                // with no per-recipient grouping (a fan-out to 10,000 hashed nothing here).
                out.append(Outgoing(recipients: delivery.recipients.map(\.subscriber), message: NamespaceState.untaggedPush(delivery.change)))
                continue
            }
            var byTag: [Int?: [ConnectionID]] = [:]
            var byLocation: [Path: [ConnectionID]] = [:]
            for recipient in delivery.recipients {
                if !streams.isEmpty, let location = streams[recipient.subscriber] {
                    byLocation[location, default: []].append(recipient.subscriber)
                } else {
                    byTag[recipient.tag, default: []].append(recipient.subscriber)
                }
            }
            if !byTag.isEmpty {
                let (isMerge, path, data) = NamespaceState.pushParts(delivery.change)
                for (tag, recipients) in byTag {
                    out.append(Outgoing(recipients: recipients, message: ServerMessage.push(merge: isMerge, path: path, data: data, tag: tag)))
                }
            }
            for (location, recipients) in byLocation {
                let events = EventStreamEncoding.events(for: delivery.change, at: location)
                if !events.isEmpty { out.append(Outgoing(recipients: recipients, message: events)) }
            }
        }
        return out
    }

    /// A change's push message for plain (untagged) listens.
    private static func untaggedPush(_ change: Delivery<ConnectionID>.Change) -> [UInt8] {
        let (isMerge, path, data) = pushParts(change)
        return ServerMessage.push(merge: isMerge, path: path, data: data, tag: nil)
    }

    /// Whether a change is a merge, its path, and its data encoded once.
    private static func pushParts(_ change: Delivery<ConnectionID>.Change) -> (Bool, Path, [UInt8]) {
        switch change {
        case .put(let at, let node): (false, at, ServerMessage.data(node))
        case .merge(let at, let entries): (true, at, ServerMessage.mergeData(entries))
        }
    }
}

extension AuthState {
    /// The token's expiry claim for the auth reply (null when there is none).
    var expiry: JSONValue {
        if case .user(let claims) = self, let exp = claims["exp"] { return exp }
        return .null
    }
}
