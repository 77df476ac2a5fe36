import Dispatch
import Foundation
import KindlingCore
import KindlingProtocol
import Logging
import Metrics
import NATSClient
import NIOCore
import Synchronization

/// One namespace's state, isolated to the namespace: the compiler lets only code running on
/// its executor (`NamespaceExecutor`, a serial Dispatch queue) touch it.
///
/// Every request is a block on `queue`, which targets the executor's queue, run to completion
/// before the next: writes are totally ordered, each connection's requests are handled in the
/// order they arrived (a Dispatch queue is FIFO, which an actor's task scheduling does not
/// promise), and no state is shared with the network threads. A block enters the namespace
/// with `run` (or `runNow`). Outputs are encoded once and handed
/// to each connection's outbound sink, which writes on that connection's event loop. A
/// realtime read batch runs on the event loop that read it, through `queue.sync`, when the
/// namespace is idle (see `submit`): a block on the queue all the same, without a thread hop.
/// While the namespace reads its cluster log, `queue` is held (its requests wait) and the
/// join runs as the actor's own tasks on the executor.
///
/// REST requests and event streams come in through `Namespace+REST.swift`, and cluster mode's
/// part is in `Cluster/Namespace+Cluster.swift`.
actor Namespace {
    let name: String
    /// Where the namespace's requests queue, in order; its blocks run on `executor`.
    nonisolated let queue: DispatchQueue
    nonisolated let executor: NamespaceExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    let logger: Logger
    var state: NamespaceState
    var outbounds = ConnectionTable<SubscriberOutbound>()
    /// Realtime connections the namespace forgot while they were still open (their client came
    /// back as a new session, or a deposed leader dropped its tree), until they detach: nothing
    /// more they send is taken.
    var forgottenConnections: Set<ConnectionID> = []
    /// Where the namespace keeps its writes, from its first write on.
    var durability: NamespaceDurability
    /// The sequence number of the last write handed to the log.
    var lastSequence: UInt64 = 0
    /// When the last logged write was committed (milliseconds since 1970): the history's clock,
    /// which never runs back within a run even if the system clock is stepped back.
    var lastCommitTime: Int64 = 0
    /// Outputs waiting for the log to make their writes durable, released by the log's thread.
    let held: HeldDeliveries
    /// Rules set for this namespace alone (`PUT /.settings/rules.json`); they override the
    /// server's default rules.
    var ownRules: RulesDocument?
    /// The server's rules (`--rules`), in force when the namespace has none of its own, and
    /// whether they are the open rules.
    var serverRules: (rules: RulesDocument, open: Bool)
    /// The registry that made the namespace: asked before its first write, told when a use ends.
    private weak var lifecycle: (any NamespaceLifecycle)?
    /// The server's metrics, reported to once per block of work; nil where none are kept.
    let metrics: ServerMetrics?
    /// The listens last reported to `metrics`.
    private var reportedListens = 0
    /// Writes committed since start, so a size measured at one count is known to be current.
    var committedWrites: UInt64 = 0
    /// Bounds the lines about refused requests a flood of them can cause.
    private var refusalLines = LinesPerSecond(limit: 20)
    /// The cluster this node serves the namespace in; nil outside cluster mode. Set once, in
    /// `joinCluster`, before the queue runs anything.
    var cluster: ClusterNode?
    /// What the namespace is to its cluster (`standalone` outside one), with what only that role
    /// has; changed only through `changeRole` (and its leadership's own marks through
    /// `NamespaceRole.updateLeadership`).
    var role: Role = .standalone
    /// The role's projections every block reads (the admission, `finish`), kept by `changeRole`:
    /// read from the role itself they cost a copy of its payload through the generic enum's
    /// run-time witnesses on every block (the profile of 256 x 16 writes showed it).
    var standing: AdmissionGate.Standing = .standalone
    var unserved: Refusal?
    /// The log a leader's writes go to; nil on any other role.
    var replicated: ReplicatedLog?
    typealias Role = NamespaceRole<Leadership, Task<Void, Never>>
    /// Where this node stands in the namespace's log: the last batch committed from it and the
    /// last message read (`LogChain`).
    var logChain = LogChain()
    /// The forwarded writes committed lately, by id: a write a follower sends again is answered
    /// from here rather than applied twice. Kept as the log is committed (and as a leader
    /// makes its records), dropped with the tree at a rejoin.
    var recentWriteIDs = RecentWriteIDs()
    /// The puts and deletes of this node's registrations in `kindling_ondisconnect`, one after
    /// the other (each waits for the one before), so the bucket ends with the last.
    var registrationStore: Task<Void, Never>?
    /// The connections whose registrations are in the bucket.
    var storedRegistrations: Set<ConnectionID> = []
    /// The revision of each connection's last put in the bucket; used by the puts' tasks.
    let registrationRevisions = Mutex<[ConnectionID: UInt64]>([:])
    /// The registrations of connections a rejoin closed, made once it is done.
    var orphanedRegistrations: [(connection: ConnectionID, writes: [ForwardedWrite], stored: Bool)] = []
    /// Every lease time: on the leader, runs the registrations of dead nodes; on a follower,
    /// takes the lease when it is free (`clusterTick`).
    var clusterTicker: Task<Void, Never>?
    /// The stream sequence the newest cluster snapshot covers (loaded or written here).
    var clusterSnapshotCovered: UInt64 = 0
    /// Where the namespace's profiler records go, while at least one profiler listens
    /// (`Namespace+Profile`); nil otherwise.
    var profile: NamespaceProfile?
    /// Whether `profile` is set, for the doors that run off the namespace's queue: they stamp a
    /// request's arrival only then (one relaxed load otherwise).
    nonisolated let profiled = Atomic<Bool>(false)
    /// True while `queue` is held for a cluster join (`Namespace.startJoining`), for the doors
    /// that must not wait for it (`sizeSample`).
    nonisolated let queueHeld = Atomic<Bool>(false)

    init(
        name: String, logger: Logger, root: Node = .empty, rules: RulesDocument = .open, rulesAreOpen: Bool = true, rulesDebug: Bool = false,
        rulesCoverage: Bool = false, limits: ConnectionLimits = ConnectionLimits(), answerBudget: InFlightBudget? = nil,
        lifecycle: (any NamespaceLifecycle)? = nil,
        metrics: ServerMetrics? = nil
    ) {
        self.name = name
        self.answerBudget = answerBudget
        self.metrics = metrics
        self.held = HeldDeliveries(metrics: metrics)
        self.lifecycle = lifecycle
        self.durability = lifecycle == nil ? .memory : .unclaimed
        let executor = NamespaceExecutor(label: "kindling.namespace.\(name)")
        self.executor = executor
        self.queue = DispatchQueue(label: "kindling.namespace.\(name).requests", target: executor.queue)
        var logger = logger
        logger[metadataKey: "namespace"] = "\(name)"
        self.logger = logger
        self.state = NamespaceState(
            name: name, root: root, rules: rules, rulesAreOpen: rulesAreOpen, rulesShared: true, rulesDebug: rulesDebug,
            rulesCoverage: rulesCoverage, limits: limits
        )
        self.serverRules = (rules, rulesAreOpen)
    }

    /// Blocks of `submit` queued or running.
    let submitBlocks = Atomic<Int>(0)
    /// The server-wide budget of requests in progress (`--max-unfinished-mb`): the answers a
    /// block makes to realtime reads are held against it until their event loops have handed
    /// them to their connections (a reader's backlog counts what it has not taken from then
    /// on). Without it, many connections reading a large location in one loop turn had every
    /// answer made at once, one copy each, before any went out.
    let answerBudget: InFlightBudget?
    /// What a block reserves of `answerBudget` at least, so a block of small answers takes it
    /// once, not once per answer.
    static let answerReservation = 1 << 20

    /// Refuses every request from now on with `refusal` (a cluster node over its namespace cap);
    /// called before anyone uses the namespace.
    nonisolated func refuseEverything(_ refusal: Refusal) {
        runNow { namespace in _ = namespace.changeRole(.refuse(refusal)) }
    }

    /// Nil when writes may be taken now, else the refusal. A namespace not
    /// yet claimed reserves a place under the registry's cap for its first write (given back by
    /// `settleReservation` when that write does not happen).
    var writeRefusal: Refusal? {
        switch durability {
        case .unclaimed:
            if let message = lifecycle?.reserve(self) { return .namespaceLimit(message) }
        case .failed:
            return .unavailable(Namespace.unwritable)
        case .stored(let disk):
            if !disk.storage.log.isHealthy { return .unavailable(Namespace.unwritable) }
        case .memory:
            break
        }
        if standing != .standalone, replicated?.isHealthy != true { return .unavailable(Namespace.notLeading) }
        return nil
    }

    /// The first write of a namespace not yet claimed: the registry counts it and this creates
    /// its directory and files, here on the namespace's own queue (never on an event loop).
    func claim() {
        guard case .unclaimed = durability, let lifecycle else { return }
        guard case .stored(let directory, let configuration, let budget) = lifecycle.claim(self) else {
            durability = .memory
            return
        }
        do {
            let storage = try makeStorage(directory: directory, configuration: configuration, budget: budget, lastSequence: 0)
            let journal = startJournal(directory: directory)
            durability = .stored(
                NamespaceDisk(storage: storage, rulesFile: NamespaceRulesFile(directory: directory), journal: journal, snapshotSequence: 0))
            flushJournal()
        } catch {
            logger.error("cannot create the namespace's storage; its writes are refused: \(error)")
            durability = .failed
        }
    }

    /// After a block that asked `writeRefusal`: a place reserved for a first write that did not
    /// happen (refused, or an onDisconnect registration) goes back.
    func settleReservation() {
        if case .unclaimed = durability { lifecycle?.unreserve(self) }
    }

    /// Ends one use of the namespace (see `NamespaceRegistry.namespace`).
    func release() { lifecycle?.released(self) }

    private nonisolated func makeStorage(
        directory: String, configuration: StorageConfiguration, budget: OpenLogBudget?, lastSequence: UInt64
    ) throws -> NamespaceStorage {
        try NamespaceStorage(
            directory: directory,
            configuration: configuration,
            startSequence: lastSequence + 1,
            budget: budget,
            logger: logger,
            metrics: metrics,
            onDurable: { [held] sequence in held.release(through: sequence) }
        )
    }

    /// Makes the namespace durable: writes from now on are logged after `lastSequence`; the
    /// newest snapshot on disk covers the writes through `snapshotSequence`.
    nonisolated func attachStorage(
        directory: String, configuration: StorageConfiguration, budget: OpenLogBudget? = nil, lastSequence: UInt64, snapshotSequence: UInt64,
        lastTime: Int64 = 0
    ) throws {
        let storage = try makeStorage(directory: directory, configuration: configuration, budget: budget, lastSequence: lastSequence)
        storage.purgeHistory()
        runNow { namespace in
            namespace.lastSequence = lastSequence
            namespace.lastCommitTime = lastTime
            let left = namespace.takeLeftRegistrations(directory: directory)
            let disk = NamespaceDisk(
                storage: storage, rulesFile: NamespaceRulesFile(directory: directory), journal: namespace.startJournal(directory: directory),
                snapshotSequence: snapshotSequence)
            namespace.durability = .stored(disk)
            namespace.flushJournal()
            namespace.loadOwnRules()
            namespace.makeLeftRegistrations(left)
        }
    }

    /// Starts a snapshot now (an operator's request), unless the newest one already covers every
    /// write. Returns whether one was started.
    nonisolated func snapshotNow() -> Bool {
        runNow { namespace in namespace.startSnapshotIfDue() }
    }

    /// `snapshotNow` on the namespace.
    private func startSnapshotIfDue() -> Bool {
        if let leadership = role.leadership, let cluster {
            guard !leadership.snapshotting, leadership.log.appendedBytes > leadership.snapshotMark else { return false }
            startClusterSnapshot(leadership.log, node: cluster)
            return true
        }
        guard let disk = durability.disk, lastSequence > disk.snapshotSequence else { return false }
        startSnapshot(disk)
        return true
    }

    /// Snapshots the tree as of the last logged write.
    private func startSnapshot(_ disk: NamespaceDisk) {
        disk.snapshotSequence = lastSequence
        disk.storage.snapshot(state.database.tree.root, sequence: lastSequence)
    }

    /// Waits until every write so far is durable and every snapshot written (for shutdown).
    nonisolated func drainStorage() {
        let storage = runNow { namespace in namespace.durability.disk?.storage }
        storage?.drain()
        runNow { _ in }
    }

    /// Registers a connection of session `session` and where its messages go. When the client
    /// says it was `last` (`ls`) and that connection is still open here, the client is back
    /// while the network left its old socket half-open: the old connection is forgotten now,
    /// its onDisconnect writes made before anything the new one asks (a presence flag set by
    /// the new session is not undone by the old one's when its socket times out), and closed.
    /// Only outside cluster mode or on the namespace's leader: a follower's (or a node's not yet
    /// joined) onDisconnect writes are made by the leader, later than the new connection's own
    /// could arrive, so they could not be put first.
    /// `remote` is the client's address, given while the namespace is profiled.
    nonisolated func attach(
        _ connection: ConnectionID, session: SessionID, replacing last: SessionID?, outbound: ConnectionOutbound, remote: String? = nil
    ) {
        run { namespace in
            let started = namespace.profile == nil ? 0 : ProfileClock.now()
            if let last, [.standalone, .leading].contains(namespace.standing), last.connection != connection,
                namespace.state.holds(last.connection, sessionToken: last.token),
                case .webSocket(let old)? = namespace.outbounds[last.connection]
            {
                namespace.logger.info("a client is back as a new session: closing its old connection", metadata: ["connection": "\(last.connection)"])
                namespace.disconnect(last.connection)
                namespace.forgottenConnections.insert(last.connection)
                old.close(reason: "The client reconnected as another session.")
            }
            namespace.state.connect(connection, sessionToken: session.token)
            namespace.outbounds[connection] = .webSocket(outbound)
            if namespace.profile != nil { namespace.profileConnected(connection, outbound: outbound, remote: remote, started: started) }
        }
    }

    static let unwritable = "Writes to storage are failing (is the disk full?); nothing was written."
    /// How long a namespace whose log could not be read waits before it tries again.
    static let rejoinDelay: Duration = .seconds(5)
    static let notJoined = "This cluster node could not read the namespace's log from NATS; try another node."
    static let notLeading = "This cluster node does not lead the namespace now; nothing was written. Try again."
    /// A write held for the log when its node stopped leading: its batch may have been stored
    /// (its acknowledgement lost) or not.
    static let unconfirmed =
        "This cluster node stopped leading the namespace before the write was confirmed: it may or may not be stored. Read it back before writing it again."

    /// Drops a connection's identity to anonymous when its token expires. A timer waits at most
    /// `Int32.max` ms (~24.8 days), so an expiry further out is waited for in steps, for as long
    /// as the connection still holds that token.
    func expire(_ connection: ConnectionID, at expiresAt: Int64) {
        let delay = min(max(0, expiresAt - Namespace.now()), Int64(Int32.max))
        queue.asyncAfter(deadline: .now() + .milliseconds(Int(delay))) {
            self.enter { namespace in namespace.expireNow(connection, at: expiresAt) }
        }
    }

    /// `expire`'s timer: drops the identity if its expiry is due, or waits again.
    private func expireNow(_ connection: ConnectionID, at expiresAt: Int64) {
        if expiresAt > Namespace.now() {
            if state.connections[connection]?.auth.expiresAt == expiresAt { expire(connection, at: expiresAt) }
            return
        }
        var out: [Outgoing] = []
        state.expireAuth(of: connection, now: Namespace.now(), into: &out)
        finish(out)
        // The registrations run as the identity the connection has now.
        if let node = cluster, storedRegistrations.contains(connection) { persistRegistrations(connection, node: node) }
        durability.disk?.journal.note(.identity(state.auth(of: .realtime(connection))), of: connection)
        flushJournal()
    }

    /// Logs refused requests, one `info` line each (at most `refusalLines` a second; how many
    /// were left out is told with the next line), and with `--rules-debug` the rule traces of
    /// denied ones. `connection` is the HTTP connection of a one-off REST request.
    func logRefusals(connection: ConnectionID? = nil) {
        let (notes, more) = state.takeRefusals()
        refusalLines.skip(more)
        for note in notes {
            guard let skipped = refusalLines.take() else { continue }
            var metadata: Logger.Metadata = ["refusal": "\(note.refusal.kindName)", "action": "\(note.action.label)"]
            if let path = note.path { metadata["path"] = "\(path)" }
            if let id = note.connection ?? connection { metadata["connection"] = "\(id)" }
            if skipped > 0 { metadata["unlogged-refusals"] = "\(skipped)" }
            logger.info("refused a request", metadata: metadata)
        }
        guard state.rulesDebug else { return }
        for trace in state.takeDenials() { logger.notice("\(trace)") }
    }

    /// Hands the block's counts to the metrics: requests decided, listens now active.
    func report() {
        guard let metrics else { return }
        if !state.tally.isEmpty { metrics.add(&state.tally) }
        let listens = state.database.listenCount
        if listens != reportedListens {
            metrics.listensActive.increment(by: Double(listens - reportedListens))
            reportedListens = listens
        }
    }

    /// The write count and data now, for the tree-size metric (measured off this queue); nil
    /// while the queue is held for a cluster join (`queueHeld`): its blocks wait until the log is
    /// read, for as long as NATS stays out of reach, and a scrape of `/.metrics` must not. (A
    /// join that starts between the look and the block still holds the block until it ends.)
    nonisolated func sizeSample() -> (version: UInt64, root: Node)? {
        guard !queueHeld.load(ordering: .acquiring) else { return nil }
        return runNow { namespace in (namespace.committedWrites, namespace.state.database.tree.root) }
    }

    /// Logs the writes this block committed and sends `out` (then runs `then`) once they are
    /// durable, after anything still held; `answers` is held until the event loops have taken
    /// the outputs, and `written`'s hold until its stream's socket has taken them. `writeID`, a
    /// forwarded write's id, goes with the block's last record (the write's) and is remembered
    /// (`recentWriteIDs`) when the log is a cluster's. A deposed cluster leader runs `refused`
    /// instead of sending, or `unstored` when the writes surely never reached the log.
    ///
    /// With `flushingHere` (a block an event loop runs itself), returns the log when the caller
    /// is to flush it (`WriteAheadLog.flushHere`), once the block is done.
    @discardableResult
    func finish(
        _ out: [Outgoing], holding answers: BudgetHold? = nil, holdingUntilWritten written: (EventStreamOutbound, BudgetHold)? = nil,
        writeID: String? = nil, then: (@Sendable () -> Void)? = nil, refused: (@Sendable () -> Void)? = nil,
        unstored: (@Sendable (HeldDeliveries.Unstored) -> Void)? = nil, flushingHere: Bool = false
    ) -> WriteAheadLog? {
        let writes = state.takeJournal()
        let writers = state.takeWriters()
        if !writes.isEmpty {
            claim()
            committedWrites += UInt64(writes.count)
            metrics?.writesCommitted.increment(by: writes.count)
        }
        report()
        var delivery = prepare(out)
        if let answers { delivery.hold(answers) }
        if let (stream, hold) = written { delivery.hold(hold, untilWrittenTo: stream) }
        guard durability.isStored || replicated != nil else {
            delivery.send(metrics: metrics)
            then?()
            return nil
        }
        guard !writes.isEmpty else {
            held.send(delivery, after: 0, then: then, refused: refused, unstored: unstored)
            return nil
        }
        lastCommitTime = max(lastCommitTime, Namespace.now())
        let first = lastSequence + 1
        lastSequence += UInt64(writes.count)
        // Loops, not `map`: a closure that reads the actor's state gets a run-time check of
        // the current executor on every call (about 1% of a pipelined write's CPU).
        if let replicated {
            var records: [LogRecord] = []
            records.reserveCapacity(writes.count)
            for index in writes.indices { records.append(logRecord(index, of: writes, from: first, writers: writers, writeID: writeID)) }
            // In flight until the log has it: a second copy of the write waits for the same outcome.
            if writeID != nil, let last = records.last { recentWriteIDs.remember(last) }
            // Held before the log has the records, so their sync cannot be reported first.
            held.send(delivery, after: lastSequence, then: then, refused: refused, unstored: unstored)
            replicated.append(records)
            snapshotIfDue(replicated)
            return nil
        } else if let disk = durability.disk {
            // Encoded straight into the log's buffer, without an array of records between.
            var bytes: [UInt8] = []
            for index in writes.indices {
                logRecord(index, of: writes, from: first, writers: writers, writeID: writeID).encode(into: &bytes)
                if index == 0 { LogRecord.reserve(&bytes, forBatchOf: writes.count) }
            }
            held.send(delivery, after: lastSequence, then: then, refused: refused, unstored: unstored)
            let owed = disk.storage.log.append(
                encoded: bytes, through: lastSequence, flushingHere: flushingHere && writes.count <= Namespace.flushHereLimit)
            if disk.storage.wantsSnapshot { startSnapshot(disk) }
            return owed ? disk.storage.log : nil
        }
        held.send(delivery, after: lastSequence, then: then, refused: refused, unstored: unstored)
        return nil
    }

    /// The most writes of a block an event loop flushes itself (`finish`'s `flushingHere`). A
    /// loop syncing is a loop not reading: when each client waits for its answer before it
    /// writes again (a turn brings about one write per connection), nothing waits to be read
    /// meanwhile, and flushing here saves two thread wake-ups per sync. A larger block comes
    /// from clients with writes in flight, which the loop reads while the log's own thread
    /// syncs: flushed here, one 256 x 16 load lost 15% of its throughput and saved no CPU.
    static let flushHereLimit = 512

    /// The log record of a block's write `index`, sequence `first + index`: the block's last
    /// record carries a forwarded write's id.
    private func logRecord(_ index: Int, of writes: [Write], from first: UInt64, writers: [[UInt8]], writeID: String?) -> LogRecord {
        LogRecord(
            sequence: first + UInt64(index), write: writes[index], time: lastCommitTime, writer: index < writers.count ? writers[index] : nil,
            writeID: index == writes.count - 1 ? writeID : nil)
    }

    /// Forgets a connection that ended, running its onDisconnect writes (on a cluster follower,
    /// they go to the leader, in order, as writes of the identity that queued them).
    nonisolated func detach(_ connection: ConnectionID) {
        run { namespace in
            let started = namespace.profile == nil ? 0 : ProfileClock.now()
            namespace.disconnect(connection)
            namespace.forgottenConnections.remove(connection)
            if namespace.profile != nil { namespace.profileDisconnected(connection, started: started) }
            namespace.release()
        }
    }

    /// Forgets a realtime connection and makes its onDisconnect writes, as the namespace's
    /// admission says: here, through the checkpoint; by the leader, which a follower hands them
    /// to in order; or not at all (failing storage, a node that does not lead now), each
    /// counted and logged as refused. Nothing for a connection already forgotten.
    private func disconnect(_ connection: ConnectionID) {
        outbounds[connection] = nil
        let (auth, queued) = state.onDisconnectWrites(of: connection)
        let caller = Caller.onDisconnect(.close(connection), auth)
        var gate = admissionGate()
        defer { if gate.askedWrites { settleReservation() } }
        switch queued.isEmpty ? .decide : admit(.write, from: caller, through: &gate) {
        case .forward:
            let (auth, writes) = state.disconnectForForwarding(connection)
            report()
            if let node = cluster {
                closeRegistrations(
                    writes.compactMap { ForwardedWrite($0, auth: auth, origin: .onDisconnect) }[...], node: node, connection: connection)
            }
            return
        case .refuse(let refusal):
            let writes = state.disconnectForForwarding(connection).writes
            for operation in writes { state.count(operation, by: caller, refusal: refusal) }
            logger.warning(
                "onDisconnect writes were not made: \(refusal.wire.message)", metadata: ["connection": "\(connection)", "writes": "\(writes.count)"])
            logRefusals()
            report()
            journalEnded(connection)
        case .decide:
            var out: [Outgoing] = []
            for problem in state.disconnect(connection, now: Namespace.now(), into: &out) {
                logger.warning("\(problem)", metadata: ["connection": "\(connection)"])
            }
            logRefusals()
            // Taken out before the writes are durable: a crash in between loses them rather than
            // making them twice, as in cluster mode.
            journalEnded(connection)
            if storedRegistrations.contains(connection) {
                finish(out, then: { self.run { namespace in namespace.forgetRegistrations(connection) } })
            } else {
                finish(out)
            }
        }
    }

    /// Sends `out` now.
    func dispatch(_ out: [Outgoing]) {
        prepare(out).send(metrics: metrics)
    }

    /// Resolves each output's recipients, output by output, so each connection gets its
    /// messages in order: for realtime connections the bytes split into frames once and
    /// gathered per event loop, for event streams the bytes as they are (one buffer shared by
    /// all).
    private func prepare(_ out: [Outgoing]) -> PreparedDispatch {
        var delivery = PreparedDispatch()
        // Read once: a property of the namespace read per recipient is checked for exclusive
        // access each time.
        let outbounds = self.outbounds
        // A block's answers come a connection's at a time: its outbound is looked up once.
        var answered: (connection: ConnectionID, outbound: SubscriberOutbound?)?
        for (number, outgoing) in out.enumerated() {
            if case .ok(let response) = outgoing.content, case .one(let recipient) = outgoing.recipients {
                if answered?.connection != recipient { answered = (recipient, outbounds[recipient]) }
                if case .webSocket(let outbound)? = answered?.outbound {
                    delivery.add(outbound, acknowledging: response)
                    continue
                }
            }
            let message = outgoing.message
            let alone = outgoing.recipients.isSingle && TextFrame.isOneFrame(message)
            // Made at the first realtime recipient that needs them (an event for event streams
            // needs none), then passed to the others as they are: `frames(_:)` is never empty.
            var frames: [ByteBuffer] = []
            var chunk: ByteBuffer?
            for recipient in outgoing.recipients {
                switch outbounds[recipient] {
                case .webSocket(let outbound)? where alone:
                    delivery.add(outbound, single: message)
                case .webSocket(let outbound)?:
                    if frames.isEmpty { frames = TextFrame.frames(message) }
                    delivery.add(outbound, frames, message: number, bytes: message.count)
                case .eventStream(let outbound)?:
                    let shared = chunk ?? ByteBuffer(bytes: message)
                    chunk = shared
                    delivery.add(outbound, [shared], bytes: message.count)
                case nil:
                    break
                }
            }
        }
        return delivery
    }

    /// Milliseconds since the Unix epoch.
    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}
