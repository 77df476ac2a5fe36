import KindlingCore
import KindlingProtocol

/// Everything one namespace (one database) knows, and the one place every request is decided
/// and carried out, as a pure value: no I/O and no clock (the caller passes the time). The server
/// runs it on the namespace's one serial queue.
///
/// Every transport hands it an `Operation` and who asks (`Caller`); `apply` checks the security
/// rules, preconditions and limits, commits, and answers with an `Answer`. Deliveries to
/// listeners are appended to `out` before the caller turns the answer into bytes, so data for a
/// listen precedes its `ok`, and a write's changes reach every affected listener (the writer
/// included) before the writer's `ok`.
struct NamespaceState: Sendable {
    struct ConnectionRecord: Sendable {
        var auth: AuthState = .anonymous
        var onDisconnect = OnDisconnectQueue()
        /// The connection's listens, with the query object as the client sent it (for `c`).
        var listens: [ListenID: JSONValue?] = [:]
        /// The random part of the connection's session id (`SessionID`); 0 for none.
        var sessionToken: UInt64 = 0
    }

    /// A REST event stream: where it listens and as whom. Its deliveries are encoded as
    /// server-sent events relative to `location`, their data in `format`.
    struct StreamRecord: Sendable {
        var location: Path
        var query: Query
        var auth: AuthState
        var format: JSONFormat
    }

    /// Streams that are sent the same events: those at one location, in one format.
    struct StreamAudience: Hashable {
        var location: Path
        var format: JSONFormat
    }

    let name: String
    /// Written only by this type and its extensions.
    var database = DatabaseState<ConnectionID>()
    private(set) var connections: [ConnectionID: ConnectionRecord] = [:]
    /// Streams are subscribers of the same `DatabaseState` as WebSocket listens, so both see the
    /// same writes in one order.
    var streams: [ConnectionID: StreamRecord] = [:]
    /// The rules in force, and whether they are the open rules (then nothing is evaluated).
    private(set) var rules: RulesDocument
    private(set) var rulesAreOpen: Bool
    /// Rule evaluations left before this namespace takes a copy of the server's rules for
    /// itself (`RulesDocument.unshared`); nil when its rules are its own. Every namespace without
    /// rules of its own starts on the server's one document, so that thousands of idle namespaces
    /// cost nothing; a busy one pays for one load of the rules (the more evaluations, the larger
    /// the document) and then stops contending with the others for the shared objects.
    private(set) var evaluationsBeforeUnsharing: Int?
    /// The `.indexOn` indexes the rules in force declare, each held once.
    private var declaredIndexes: Set<DeclaredIndex> = []
    /// Evaluate rules with a trace and keep the traces of denials for the log (`--rules-debug`).
    let rulesDebug: Bool
    /// Traces of denied requests since the owner last took them (only with `rulesDebug`).
    private var denials: [String] = []
    /// `--rules-coverage`: the rules in force are loaded for coverage and every decision on a
    /// request counts in `coverage`.
    let rulesCoverage: Bool
    /// What the rules in force evaluated since they were put in force or `resetCoverage`; nil
    /// without `rulesCoverage`. Re-checks that answer no request (live listens and streams when
    /// the rules change, whether a query may be served unindexed) do not count.
    private(set) var coverage: RulesCoverage?
    let limits: ConnectionLimits
    private var pushIDs = PushIDGenerator()

    /// The writes committed since the owner last took them, in order, for the log.
    private var journal: [Write] = []
    /// The requests decided since the owner last reported them, for the metrics.
    var tally = RequestTally()
    /// Refused requests since the owner last took them, for its log (at most
    /// `maxRefusalNotes`; the rest only counted in `unnotedRefusals`).
    private var refusalNotes: [RefusalNote] = []
    private var unnotedRefusals = 0
    static let maxRefusalNotes = 64
    /// Set while a profiler listens: each operation decided and each broadcast is noted there
    /// (`NamespaceState+Profile`). Nil otherwise, which is all `apply` and `commit` then check.
    var profiling: ProfileTrail?

    init(
        name: String, root: Node = .empty, rules: RulesDocument = .open, rulesAreOpen: Bool = true, rulesShared: Bool = false,
        rulesDebug: Bool = false, rulesCoverage: Bool = false, limits: ConnectionLimits = ConnectionLimits()
    ) {
        self.name = name
        self.rulesDebug = rulesDebug
        self.rulesCoverage = rulesCoverage
        self.database = DatabaseState(root: root)
        self.rules = rulesCoverage ? rules.instrumented() : rules
        self.coverage = rulesCoverage ? RulesCoverage(self.rules) : nil
        self.rulesAreOpen = rulesAreOpen
        self.evaluationsBeforeUnsharing = rulesShared ? NamespaceState.evaluationsBeforeUnsharing(rules) : nil
        self.limits = limits
        declareIndexes()
    }

    /// How many writes `takeJournal` would hand over now.
    var pendingWrites: Int { journal.count }

    /// Hands over the writes committed since the last call.
    mutating func takeJournal() -> [Write] {
        defer { journal = [] }
        return journal
    }

    /// Record who made each committed write (`HistoryPolicy.recordsWriters`).
    var recordsWriters = false
    /// The writer of each write in the journal (JSON text), while `recordsWriters`.
    private var journalWriters: [[UInt8]] = []

    /// Hands over the writers of the writes committed since the last call (empty unless
    /// `recordsWriters`), in the journal's order.
    mutating func takeWriters() -> [[UInt8]] {
        defer { journalWriters = [] }
        return journalWriters
    }

    /// Hands over the refused requests noted since the last call, and how many more were
    /// refused beyond the notes kept.
    mutating func takeRefusals() -> (notes: [RefusalNote], more: Int) {
        defer {
            refusalNotes = []
            unnotedRefusals = 0
        }
        return (refusalNotes, unnotedRefusals)
    }

    /// Hands over the traces of requests denied since the last call.
    mutating func takeDenials() -> [String] {
        defer { denials = [] }
        return denials
    }

    mutating func connect(_ connection: ConnectionID, sessionToken: UInt64 = 0) {
        connections[connection] = ConnectionRecord(sessionToken: sessionToken)
    }

    /// Whether `connection` is open here as the session whose random part is `token` (what an
    /// `ls` must name to close it).
    func holds(_ connection: ConnectionID, sessionToken token: UInt64) -> Bool {
        token != 0 && connections[connection]?.sessionToken == token
    }

    /// The identity a caller acts as.
    func auth(of caller: Caller) -> AuthState {
        switch caller {
        case .realtime(let connection): return connections[connection]?.auth ?? .anonymous
        case .stream(_, let auth), .rest(let auth), .forwarded(_, let auth), .onDisconnect(_, let auth): return auth
        }
    }

    // MARK: The checkpoint

    /// Decides and carries out one operation, a client's request. Nothing is changed unless the
    /// answer says so. Counted by action and outcome, and a refusal is noted for the log.
    mutating func apply(_ operation: Operation, by caller: Caller, now: Int64, into out: inout [Outgoing]) -> Answer {
        let journaled = journal.count
        let profiled = profiling.map { (started: $0.clock(), record: $0.records.count, sent: out.count) }
        let answer = decide(operation, by: caller, now: now, into: &out)
        if let profiled {
            noteOperation(operation, by: caller, answer: answer, started: profiled.started, at: profiled.record, sent: out[profiled.sent...])
        }
        if recordsWriters, journal.count > journaled {
            let writer = Array(JSONWriter.string(auth(of: caller).writerValue).utf8)
            journalWriters.append(contentsOf: repeatElement(writer, count: journal.count - journaled))
        }
        if case .refused(let refusal) = answer {
            count(operation, by: caller, refusal: refusal)
        } else {
            count(operation, by: caller, refusal: nil)
        }
        return answer
    }

    /// Counts a decided request (also one the namespace refused before asking: failing storage,
    /// the namespace cap), and notes a refusal for the log.
    mutating func count(_ operation: Operation, by caller: Caller, refusal: Refusal?) {
        guard let action = RequestAction(operation, by: caller) else { return }
        tally.record(action, RequestOutcome(refusal))
        guard let refusal else { return }
        if refusalNotes.count < NamespaceState.maxRefusalNotes {
            refusalNotes.append(RefusalNote(refusal, action: action, operation: operation, caller: caller))
        } else {
            unnotedRefusals += 1
        }
    }

    /// The listen answer's `d` for a query served without an index: the SDKs log "Using an
    /// unspecified index…" with the `.indexOn` to add.
    static let noIndexWarning = Array(#"{"w":["no_index"]}"#.utf8)

    static let indexBudgetRefusal =
        "The query needs an index of its order here, and the database keeps as many as it can (at most \(IndexStore.maxQueryIndexesPerLocation) orders per location, and a budget of entries across the database); declare it with .indexOn, or query fewer orders"

    private mutating func decide(_ operation: Operation, by caller: Caller, now: Int64, into out: inout [Outgoing]) -> Answer {
        let auth = auth(of: caller)
        do throws(Refusal) {
            switch operation {
            case .listen(let path, let query, let tag, let hash, let wireQuery):
                guard case .realtime(let connection) = caller, connections[connection] != nil else { return .ok }
                try authorizeRead(path, query: query, as: auth, now: now)
                let id = ListenID(path: path, query: query)
                if connections[connection]?.listens[id] == nil, (connections[connection]?.listens.count ?? 0) >= limits.maxListens {
                    throw Refusal.limitExceeded("A connection may have at most \(limits.maxListens) listens")
                }
                let declared = !query.loadsAllData && declaresIndex(query.index, at: path)
                let delivery: Delivery<ConnectionID>
                if let indexed = database.listen(connection, at: path, query: query, tag: query.loadsAllData ? nil : tag, declaredIndex: declared) {
                    delivery = indexed
                } else {
                    // No index for it could be kept: served as Firebase serves a query without
                    // one, the whole location untagged for the client to filter, when the
                    // caller may read all of it (query-based rules may allow less).
                    guard mayRead(path, query: .all, as: auth, now: now) else { throw Refusal.limitExceeded(Self.indexBudgetRefusal) }
                    delivery = database.listenUnindexed(connection, at: path, query: query)
                }
                // A query served without an index says so, whether it just became one or was
                // one already (listened to again).
                let answer = !query.loadsAllData && database.servesUnindexed(connection, id) ? Answer.encoded(Self.noIndexWarning) : .ok
                connections[connection]?.listens[id] = wireQuery
                if case .put(_, let node) = delivery.change, !hash.isEmpty, node.matchesHash(hash) {
                    // The client already holds exactly this data: acknowledge without resending it.
                } else {
                    out.append(contentsOf: encode([delivery]))
                }
                return answer
            case .unlisten(let path, let query):
                guard case .realtime(let connection) = caller else { return .ok }
                connections[connection]?.listens[ListenID(path: path, query: query)] = nil
                database.unlisten(connection, at: path, query: query)
                return .ok
            case .get(let path, let query):
                try authorizeRead(path, query: query, as: auth, now: now)
                return .data(database.read(path, query: query))
            case .set(let path, let data, let precondition):
                if let precondition {
                    // A precondition compares the caller's copy of the data with the data: only
                    // a caller who may read it has one, and to anyone else the answer would
                    // tell whether a guess of the data was right.
                    guard mayRead(path, query: .all, as: auth, now: now) else { throw Refusal.permissionDenied }
                    // A stale transaction is told so before its data is judged: the client then
                    // reruns it on the current data, which its new result may suit.
                    if precondition.isHash { try check(precondition, at: path) }
                }
                let write = try resolve { tree throws(ValidationError) in
                    try tree.resolveSet(path, data, serverValues: ServerValues(timestamp: Double(now)))
                }
                try authorizeWrite(write, as: auth, now: now)
                if let precondition, !precondition.isHash { try check(precondition, at: path) }
                commit(write, into: &out)
                guard case .set(_, let node) = write else { return .ok }
                // A set leaves exactly its node at the path.
                return .written(.stored(node), location: node)
            case .update(let path, let members):
                let write = try resolve { tree throws(ValidationError) in
                    try tree.resolveUpdate(path, members, serverValues: ServerValues(timestamp: Double(now)))
                }
                try authorizeWrite(write, as: auth, now: now)
                commit(write, into: &out)
                guard case .merge(_, let entries) = write else { return .ok }
                return .written(.updated(entries), location: location(at: path, for: caller))
            case .push(let path, let data):
                if path.last?.isPriority == true {
                    throw Refusal.invalid(ValidationError(.invalidPath, "Can't push below \".priority\" at \(path)"))
                }
                if path.count >= Path.maxDepth {
                    throw Refusal.invalid(ValidationError(.tooDeep, "Path \(path)/<push id> exceeds the maximum depth of \(Path.maxDepth) levels"))
                }
                let name = nextPushID(now: now)
                let write = try resolve { tree throws(ValidationError) in
                    try tree.resolveSet(path.child(name), data, serverValues: ServerValues(timestamp: Double(now)))
                }
                // Null or an empty object would store nothing under an id the client is told about.
                if case .set(_, let node) = write, node.isEmpty {
                    throw Refusal.invalid(ValidationError(.invalidData, "A push needs data; \(JSONWriter.string(data)) would write nothing"))
                }
                try authorizeWrite(write, as: auth, now: now)
                commit(write, into: &out)
                return .written(.pushed(name), location: location(at: path, for: caller))
            case .onDisconnectSet(let path, let data):
                guard case .realtime(let connection) = caller, connections[connection] != nil else { return .ok }
                let write = try resolve { tree throws(ValidationError) in
                    try tree.resolveSet(path, data, serverValues: ServerValues(timestamp: Double(now)))
                }
                try authorizeWrite(write, as: auth, now: now)
                try queueOnDisconnect(.put(path, data), for: connection)
                return .ok
            case .onDisconnectUpdate(let path, let members):
                guard case .realtime(let connection) = caller, connections[connection] != nil else { return .ok }
                let write = try resolve { tree throws(ValidationError) in
                    try tree.resolveUpdate(path, members, serverValues: ServerValues(timestamp: Double(now)))
                }
                try authorizeWrite(write, as: auth, now: now)
                try queueOnDisconnect(.merge(path, members), for: connection)
                return .ok
            case .onDisconnectCancel(let path):
                guard case .realtime(let connection) = caller else { return .ok }
                connections[connection]?.onDisconnect.cancel(at: path)
                return .ok
            case .openStream(let path, let query, let format):
                guard case .stream(let stream, let auth) = caller else { return .ok }
                try authorizeRead(path, query: query, as: auth, now: now)
                let declared = !query.loadsAllData && declaresIndex(query.index, at: path)
                guard let delivery = database.listen(stream, at: path, query: query, tag: nil, declaredIndex: declared) else {
                    throw Refusal.limitExceeded(Self.indexBudgetRefusal)
                }
                streams[stream] = StreamRecord(location: path, query: query, auth: auth, format: format)
                out.append(contentsOf: encode([delivery]))
                return .ok
            case .authenticate(let newAuth):
                guard case .realtime(let connection) = caller, connections[connection] != nil else { return .ok }
                connections[connection]?.auth = newAuth
                revokeUnreadableListens(of: connection, now: now, into: &out)
                return .authenticated(newAuth)
            case .refuseCredential(let refusal):
                throw refusal
            case .acknowledge(let data):
                return data.map(Answer.encoded) ?? .ok
            }
        } catch {
            return .refused(error)
        }
    }

    /// The data at a written path, for a one-off request's ETag (also one a follower forwarded,
    /// or decides itself once it leads); a realtime connection's answer carries none, and an
    /// onDisconnect write has no answer.
    private func location(at path: Path, for caller: Caller) -> Node? {
        switch caller {
        case .rest, .forwarded: database.tree.node(at: path)
        case .realtime, .stream, .onDisconnect: nil
        }
    }

    /// Validates and resolves a write against the current tree, as a refusal when invalid or,
    /// in cluster mode, too large for one log message.
    private func resolve(_ body: (DataTree) throws(ValidationError) -> Write) throws(Refusal) -> Write {
        let write: Write
        do throws(ValidationError) {
            write = try body(database.tree)
        } catch {
            throw Refusal.invalid(error)
        }
        guard limits.maxWriteBytes < .max else { return write }
        // Measured as stored (numbers such as 5e20 grow when written out), without keeping it.
        var writer = JSONWriter(countingOnly: 64 * 1024)
        switch write {
        case .set(let path, let node):
            writer.write(relativePath: path)
            node.write(to: &writer, format: .export)
        case .merge(let path, let entries):
            writer.write(relativePath: path)
            writer.write(entries, format: .export)
        }
        guard writer.count <= limits.maxWriteBytes else {
            throw Refusal.limitExceeded(
                "A write may be at most \(limits.maxWriteBytes) bytes in cluster mode (one NATS message); this one is \(writer.count)")
        }
        return write
    }

    /// Only admins read or replace a namespace's rules, whatever the rules say.
    func refusalOfRulesAccess(by auth: AuthState) -> Refusal? { auth == .admin ? nil : .permissionDenied }

    /// Admins, and everyone while the rules are open, skip rule evaluation.
    private func bypassesRules(_ auth: AuthState) -> Bool { rulesAreOpen || auth == .admin }

    /// May `auth` read `path` (with `query`) now?
    func mayRead(_ path: Path, query: Query, as auth: AuthState, now: Int64) -> Bool {
        bypassesRules(auth) || rules.canRead(path, auth: auth.ruleValue, root: database.tree.root, query: query, now: now).allowed
    }

    private mutating func authorizeRead(_ path: Path, query: Query, as auth: AuthState, now: Int64) throws(Refusal) {
        guard !bypassesRules(auth) else { return }
        countEvaluation()
        let decision = rules.canRead(
            path, auth: auth.ruleValue, root: database.tree.root, query: query, now: now, explain: rulesDebug, coverage: &coverage)
        guard decision.allowed else {
            if rulesDebug { denials.append("read \(path) denied:\n" + decision.trace.joined(separator: "\n")) }
            throw Refusal.permissionDenied
        }
    }

    /// May `auth` make this (resolved) write? The rules see the tree as it would be after it,
    /// computed only where they read it.
    private mutating func authorizeWrite(_ write: Write, as auth: AuthState, now: Int64) throws(Refusal) {
        guard !bypassesRules(auth) else { return }
        countEvaluation()
        let decision = rules.canWrite(write, auth: auth.ruleValue, old: database.tree.root, now: now, explain: rulesDebug, coverage: &coverage)
        guard decision.allowed else {
            if rulesDebug { denials.append("write \(write.path) denied:\n" + decision.trace.joined(separator: "\n")) }
            throw Refusal.permissionDenied
        }
    }

    /// Rules coverage starts again from nothing (`DELETE /.inspect/coverage.json`).
    mutating func resetCoverage() {
        coverage?.reset()
    }

    /// Counts one evaluation of shared rules, and takes a copy of them once enough were made.
    private mutating func countEvaluation() {
        guard let left = evaluationsBeforeUnsharing else { return }
        guard left <= 1 else {
            evaluationsBeforeUnsharing = left - 1
            return
        }
        rules = rules.unshared()
        evaluationsBeforeUnsharing = nil
    }

    /// A few thousand, plus one per byte of the document: loading it again then costs a small
    /// share of what its evaluations did (a 200 KB document loads in ~30 ms).
    static func evaluationsBeforeUnsharing(_ rules: RulesDocument) -> Int {
        4096 + rules.source.utf8.count
    }

    /// A conditional write's test, for a caller who may read `path` (so a failed REST `if-match`
    /// carries the current data).
    private func check(_ precondition: Precondition, at path: Path) throws(Refusal) {
        switch precondition {
        case .hash(let hash):
            guard database.tree.matches(hash: hash, at: path) else { throw Refusal.dataStale }
        case .etag(let expected):
            let current = database.tree.node(at: path)
            guard ETag.of(current) == expected else {
                throw Refusal.preconditionFailed(current: current)
            }
        }
    }

    private mutating func queueOnDisconnect(_ operation: OnDisconnectQueue.Operation, for connection: ConnectionID) throws(Refusal) {
        // Checked on a copy: a refused operation leaves the queue as it was.
        guard var queue = connections[connection]?.onDisconnect else { return }
        let locations = operation.locations
        queue.dropOverwritten(by: locations)
        guard queue.count < limits.maxOnDisconnectOperations else {
            throw Refusal.limitExceeded("A connection may queue at most \(limits.maxOnDisconnectOperations) onDisconnect operations")
        }
        let size = operation.bytes
        guard queue.bytes + size <= limits.maxOnDisconnectBytes else {
            throw Refusal.limitExceeded("A connection may queue at most \(limits.maxOnDisconnectBytes) bytes of onDisconnect data")
        }
        queue.append(operation, bytes: size, locations: locations)
        connections[connection]?.onDisconnect = queue
    }

    /// Applies a resolved write (from any source) and appends the changes for its listeners.
    mutating func commit(_ write: Write, into out: inout [Outgoing]) {
        journal.append(write)
        if profiling != nil { return commitNoted(write, into: &out) }
        // Committed first, encoded after: in `encode(database.commit(write))` the receiver of
        // `encode` is a copy of `self` taken before the argument runs, and that copy shares the
        // tree, so every page the write touched was copied (and the copy of the whole state
        // destroyed) on each write.
        let deliveries = database.commit(write)
        out.append(contentsOf: encode(deliveries))
    }

    // MARK: Connections, auth and rules changing

    /// Forgets a connection: its listens go, then its queued onDisconnect writes run, in order,
    /// through the checkpoint (`apply`), with server values resolved now and the rules checked
    /// again for the identity that queued them, and their changes go to the remaining listeners.
    /// Each is counted as an onDisconnect write, and a refused one is noted.
    mutating func disconnect(_ connection: ConnectionID, now: Int64, into out: inout [Outgoing]) -> [String] {
        database.removeSubscriber(connection)
        guard var record = connections.removeValue(forKey: connection) else { return [] }
        var problems: [String] = []
        for operation in record.onDisconnect.drain() {
            let caller = Caller.onDisconnect(.close(connection), record.auth)
            if case .refused(let refusal) = apply(Self.write(operation), by: caller, now: now, into: &out) {
                problems.append("onDisconnect write at \(operation.path) was not made: \(refusal.wire.message)")
            }
        }
        return problems
    }

    /// Forgets a connection whose onDisconnect writes another node decides (a cluster follower's
    /// connection: the namespace's leader runs them). Its listens go, and its queued writes come
    /// back in order, as set and update operations, with the identity that queued them.
    mutating func disconnectForForwarding(_ connection: ConnectionID) -> (auth: AuthState, writes: [Operation]) {
        database.removeSubscriber(connection)
        guard var record = connections.removeValue(forKey: connection) else { return (.anonymous, []) }
        return (record.auth, record.onDisconnect.drain().map(Self.write))
    }

    /// A connection's queued onDisconnect writes, left queued, with the identity that queued
    /// them (what a cluster node keeps in NATS, so the leader can run them should it die).
    func onDisconnectWrites(of connection: ConnectionID) -> (auth: AuthState, writes: [Operation]) {
        guard let record = connections[connection] else { return (.anonymous, []) }
        return (record.auth, record.onDisconnect.operations.map(Self.write))
    }

    /// The write a queued onDisconnect operation makes when it runs.
    private static func write(_ operation: OnDisconnectQueue.Operation) -> Operation {
        switch operation {
        case .put(let path, let json): return .set(path: path, data: json, precondition: nil)
        case .merge(let path, let members): return .update(path: path, members: members)
        }
    }

    /// The identity of a connection whose token expired drops to anonymous: the client is told
    /// (`ac`), and listens it may no longer read are cancelled. Does nothing when the connection
    /// re-authenticated since (its expiry is no longer due).
    mutating func expireAuth(of connection: ConnectionID, now: Int64, into out: inout [Outgoing]) {
        guard let record = connections[connection], let expiresAt = record.auth.expiresAt, expiresAt <= now else { return }
        connections[connection]?.auth = .anonymous
        out.append(
            Outgoing(to: connection, message: ServerMessage.authRevoked(status: WireStatus.expiredToken.rawValue, reason: "Auth token is expired.")))
        revokeUnreadableListens(of: connection, now: now, into: &out)
    }

    /// Puts new rules in force (`shared` when they are the server's document, held by other
    /// namespaces too). Every live listen and stream is checked again; those that lost read
    /// access are cancelled (`c` on the socket). Returns the streams to end with `cancel`.
    /// Under `rulesCoverage` the rules are loaded for coverage (unless they already are) and
    /// their coverage starts from nothing.
    mutating func replaceRules(_ rules: RulesDocument, open: Bool, shared: Bool, now: Int64, into out: inout [Outgoing]) -> [ConnectionID] {
        self.rules = rulesCoverage ? rules.instrumented() : rules
        coverage = rulesCoverage ? RulesCoverage(self.rules) : nil
        self.rulesAreOpen = open
        evaluationsBeforeUnsharing = shared ? NamespaceState.evaluationsBeforeUnsharing(rules) : nil
        declareIndexes()
        for connection in connections.keys { revokeUnreadableListens(of: connection, now: now, into: &out) }
        var ended: [ConnectionID] = []
        for (stream, record) in streams where !mayRead(record.location, query: record.query, as: record.auth, now: now) {
            ended.append(stream)
        }
        for stream in ended { closeStream(stream) }
        return ended
    }

    private mutating func revokeUnreadableListens(of connection: ConnectionID, now: Int64, into out: inout [Outgoing]) {
        guard let record = connections[connection], !bypassesRules(record.auth) else { return }
        for (id, wireQuery) in record.listens
        where !mayRead(id.path, query: database.servesUnindexed(connection, id) ? .all : id.query, as: record.auth, now: now) {
            connections[connection]?.listens[id] = nil
            database.unlisten(connection, at: id.path, query: id.query)
            out.append(Outgoing(to: connection, message: ServerMessage.listenRevoked(path: id.path, query: wireQuery)))
        }
    }

    /// True when the rules declare `index` at `path` with `.indexOn`, under wildcards too: the
    /// rules' author asked for it, so it is built whatever the budget for queries' indexes.
    func declaresIndex(_ index: Index, at path: Path) -> Bool {
        rules.indexDeclarations.contains { declaration in
            guard declaration.path.count == path.count else { return false }
            for (segment, key) in zip(declaration.path, path.keys) where !segment.hasPrefix("$") {
                guard segment.utf8.elementsEqual(key.string.utf8) else { return false }
            }
            return declaration.on.contains { spec in
                switch index {
                case .value: return spec.utf8.elementsEqual(".value".utf8)
                case .child(let child): return (try? Path(spec)) == child
                case .priority, .key: return false
                }
            }
        }
    }

    /// Keeps the indexes the rules declare with `.indexOn`, at their literal paths (declarations
    /// under a wildcard are built on first use instead), and gives back the ones earlier rules
    /// declared that these do not.
    private mutating func declareIndexes() {
        var declared: Set<DeclaredIndex> = []
        for declaration in rules.indexDeclarations where !declaration.path.contains(where: { $0.hasPrefix("$") }) {
            guard let path = try? Path(declaration.path.joined(separator: "/")) else { continue }
            for name in declaration.on {
                if name == ".value" {
                    declared.insert(DeclaredIndex(index: .value, path: path))
                } else if let child = try? Path(name) {
                    declared.insert(DeclaredIndex(index: .child(child), path: path))
                }
            }
        }
        for gone in declaredIndexes.subtracting(declared) { database.releaseDeclaredIndex(gone.index, at: gone.path) }
        for new in declared.subtracting(declaredIndexes) { database.declareIndex(new.index, at: new.path) }
        declaredIndexes = declared
    }

    /// Forgets an event stream.
    mutating func closeStream(_ stream: ConnectionID) {
        guard streams.removeValue(forKey: stream) != nil else { return }
        database.removeSubscriber(stream)
    }

    /// A fresh push id for a write committed at `now`.
    mutating func nextPushID(now: Int64) -> Key {
        var random = SystemRandomNumberGenerator()
        return pushIDs.next(timestamp: now, using: &random)
    }
}
