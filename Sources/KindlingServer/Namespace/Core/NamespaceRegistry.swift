import Foundation
import KindlingCore
import KindlingProtocol
import Logging
import Metrics
import Synchronization

/// The namespaces of a server and their storage.
///
/// A namespace exists once something was written to it (or it was found on disk at start); only
/// then does it have a directory and count against `maxNamespaces`. Anything else that names
/// one (a read, a listen, an event stream) gets a transient namespace (`namespace(_:)`), shared
/// by everyone using that name so a later write reaches them, with no storage; it is forgotten
/// when its last use ends without a write. A first write reserves a place under the cap
/// (`reserve`), then `claim`s the namespace on its own queue, which creates its directory and
/// files there: never on an event loop, never under this registry's lock.
final class NamespaceRegistry: NamespaceLifecycle {
    private struct Entry {
        let namespace: Namespace
        /// Connections, streams and REST requests using the namespace now.
        var uses: Int
        /// Written to, or found on disk: kept for the life of the process.
        var claimed: Bool
        /// Holds one of the cap's places while its first write is decided.
        var reserved = false
    }

    private struct Entries {
        var byName: [String: Entry] = [:]
        var claimed = 0
        /// Places held by first writes being decided, so concurrent first writes to new names
        /// (each on its own namespace's queue) cannot all pass the cap.
        var reserved = 0
    }

    private let namespaces = Mutex(Entries())
    private let logger: Logger
    private let storage: StorageConfiguration?
    private let maxNamespaces: Int
    private let lock = Mutex<DataDirectoryLock?>(nil)
    /// Bounds the namespace logs open at once.
    let openLogs: OpenLogBudget
    /// The rules of namespaces without their own, and whether they are the open rules.
    private let defaultRules: Mutex<(rules: RulesDocument, open: Bool)>
    /// `--rules-debug`: fixed for the server's life.
    private let rulesDebug: Bool
    /// `--rules-coverage`: fixed for the server's life. The default rules are then kept loaded
    /// for coverage, so the namespaces sharing them do not each load them again.
    private let rulesCoverage: Bool
    private let limits: ConnectionLimits
    /// The server-wide budget of requests in progress, which every namespace's answers to
    /// realtime reads are held against until their event loops take them.
    private let answerBudget: InFlightBudget?
    /// The server's metrics, which every namespace reports to; nil where none are kept.
    let metrics: ServerMetrics?
    /// The cluster every namespace is served in; nil for a single server. In cluster mode a
    /// namespace exists from its first use on (it reads its log from the stream, and the node
    /// may take its lease), so it is kept for the life of the process.
    let cluster: ClusterNode?

    init(
        logger: Logger, storage: StorageConfiguration?, rules: (rules: RulesDocument, open: Bool), rulesDebug: Bool = false,
        rulesCoverage: Bool = false,
        limits: ConnectionLimits = ConnectionLimits(), maxNamespaces: Int = 10_000, openLogs: OpenLogBudget = OpenLogBudget(limit: 256),
        answerBudget: InFlightBudget? = nil, metrics: ServerMetrics? = nil, cluster: ClusterNode? = nil
    ) {
        self.answerBudget = answerBudget
        self.cluster = cluster
        self.metrics = metrics
        self.openLogs = openLogs
        self.logger = logger
        self.storage = storage
        self.maxNamespaces = maxNamespaces
        self.defaultRules = Mutex(rulesCoverage ? (rules.rules.instrumented(), rules.open) : rules)
        self.rulesDebug = rulesDebug
        self.rulesCoverage = rulesCoverage
        self.limits = limits
    }

    /// A new namespace under the server's rules.
    private func makeNamespace(_ name: String, root: Node = .empty, joining: Bool = true) -> Namespace {
        let rules = defaultRules.withLock { $0 }
        let namespace = Namespace(
            name: name, logger: logger, root: root, rules: rules.rules, rulesAreOpen: rules.open, rulesDebug: rulesDebug,
            rulesCoverage: rulesCoverage,
            limits: limits,
            answerBudget: answerBudget, lifecycle: self, metrics: metrics
        )
        if joining, let cluster { namespace.joinCluster(cluster) }
        if (storage?.history ?? cluster?.configuration.history)?.recordsWriters == true { namespace.recordWriters() }
        return namespace
    }

    /// Puts new server rules in force in every namespace without rules of its own (a reloaded
    /// `--rules` file).
    func setDefaultRules(_ rules: RulesDocument, open: Bool) {
        let rules = rulesCoverage ? rules.instrumented() : rules
        defaultRules.withLock { $0 = (rules, open) }
        for namespace in namespaces.withLock({ $0.byName.values.map(\.namespace) }) { namespace.useDefaultRules(rules, open: open) }
    }

    /// Loads every namespace found in the data directory, logging what it loaded and how long
    /// it took. Damage that recovery will not cut without `--repair` stops the start. No log file
    /// stays open: each is opened at its namespace's next write.
    func recoverAll() throws {
        guard let storage else { return }
        try StorageLayout.createDirectory(storage.directory)
        let held = try DataDirectoryLock(directory: storage.directory, server: true)
        lock.withLock { $0 = held }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: storage.directory)) ?? []
        for directoryName in names.sorted() {
            let directory = storage.directory + "/" + directoryName
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
            guard let name = StorageLayout.namespace(fromDirectoryName: directoryName), NamespaceName.isValid(name) else {
                logger.warning(
                    "skipped a directory that is not a valid namespace name",
                    metadata: ["directory": "\(ValidationError.quoted(directoryName))", "rule": "\(NamespaceName.rule)"]
                )
                continue
            }
            let started = ContinuousClock.now
            let recovered = try NamespaceStorage.recover(directory: directory, repair: storage.repair, logger: logger)
            let namespace = makeNamespace(name, root: recovered.root)
            try namespace.attachStorage(
                directory: directory, configuration: storage, budget: openLogs, lastSequence: recovered.lastSequence,
                snapshotSequence: recovered.snapshotSequence, lastTime: recovered.lastTime
            )
            let claimed = namespaces.withLock { all in
                all.byName[name] = Entry(namespace: namespace, uses: 0, claimed: true)
                all.claimed += 1
                return all.claimed
            }
            metrics?.namespaces.set(claimed)
            logger.notice(
                "loaded namespace",
                metadata: [
                    "namespace": "\(name)", "snapshot-bytes": "\(recovered.snapshotBytes)",
                    "snapshot-sequence": "\(recovered.snapshotSequence)", "replayed-records": "\(recovered.replayedRecords)",
                    "last-sequence": "\(recovered.lastSequence)", "duration": "\(ContinuousClock.now - started)",
                ]
            )
        }
    }

    /// The namespace called `name` for one use, which the namespace ends: a connection (its
    /// `detach`), an event stream (`closeStream`, or `openStream` when refused), a REST request
    /// (`perform`) or a rules request (`rulesSource`, `setOwnRules`). A name not in use gets a
    /// transient namespace without storage. The name must be valid (`NamespaceName`).
    func namespace(_ name: String) -> Namespace {
        namespaces.withLock { all in
            if var entry = all.byName[name] {
                entry.uses += 1
                all.byName[name] = entry
                return entry.namespace
            }
            // A cluster node keeps every namespace it opens (it follows or leads its log): one
            // over the cap is not joined, and refuses every request until nobody uses it.
            if cluster != nil, all.claimed >= maxNamespaces {
                let refused = makeNamespace(name, joining: false)
                refused.refuseEverything(.namespaceLimit(NamespaceRegistry.clusterLimitMessage(maxNamespaces)))
                all.byName[name] = Entry(namespace: refused, uses: 1, claimed: false)
                return refused
            }
            let created = makeNamespace(name)
            all.byName[name] = Entry(namespace: created, uses: 1, claimed: cluster != nil)
            if cluster != nil {
                all.claimed += 1
                metrics?.namespaces.set(all.claimed)
            }
            return created
        }
    }

    static func clusterLimitMessage(_ limit: Int) -> String {
        "This cluster node already serves its most namespaces (\(limit), --max-namespaces); try another node or ask the operator to raise it."
    }

    /// One use of `namespace` ended; a transient one that nobody uses any more is forgotten,
    /// unless the server records rules coverage and holds at most `maxNamespaces` namespaces:
    /// then it is kept with the coverage its requests recorded, which a namespace only ever read
    /// (or refused every write) would otherwise lose between requests.
    func released(_ namespace: Namespace) {
        namespaces.withLock { all in
            guard var entry = all.byName[namespace.name], entry.namespace === namespace else { return }
            entry.uses -= 1
            if entry.uses <= 0, !entry.claimed, !(rulesCoverage && all.byName.count <= maxNamespaces) {
                if entry.reserved { all.reserved -= 1 }
                all.byName[namespace.name] = nil
            } else {
                all.byName[namespace.name] = entry
            }
        }
    }

    /// Holds a place under the cap for `namespace`'s first write while it is decided; the
    /// refusal when the server is full, else nil (also when it holds a place or data already).
    /// Checked and counted under one lock, so concurrent first writes cannot overshoot the cap.
    func reserve(_ namespace: Namespace) -> String? {
        let full = namespaces.withLock { all -> Bool in
            guard var entry = all.byName[namespace.name], entry.namespace === namespace, !entry.claimed, !entry.reserved else { return false }
            guard all.claimed + all.reserved < maxNamespaces else { return true }
            entry.reserved = true
            all.byName[namespace.name] = entry
            all.reserved += 1
            return false
        }
        guard full else { return nil }
        logger.warning("refused a new namespace: the server holds its maximum", metadata: ["cap": "\(maxNamespaces)"])
        return "This server holds its maximum of \(maxNamespaces) namespaces; writes to a new one are refused."
    }

    /// Gives back the place `reserve` held when the first write did not happen after all.
    func unreserve(_ namespace: Namespace) {
        namespaces.withLock { all in
            guard var entry = all.byName[namespace.name], entry.namespace === namespace, entry.reserved else { return }
            entry.reserved = false
            all.byName[namespace.name] = entry
            all.reserved -= 1
        }
    }

    /// The first write to `namespace`: counts it (taking the place it reserved, if any) and says
    /// where its files go. Called on the namespace's queue.
    func claim(_ namespace: Namespace) -> NamespaceClaim {
        let claimed = namespaces.withLock { all -> Int in
            guard var entry = all.byName[namespace.name], entry.namespace === namespace, !entry.claimed else { return all.claimed }
            if entry.reserved { all.reserved -= 1 }
            entry.reserved = false
            entry.claimed = true
            all.byName[namespace.name] = entry
            all.claimed += 1
            return all.claimed
        }
        metrics?.namespaces.set(claimed)
        logger.info("created namespace", metadata: ["namespace": "\(namespace.name)"])
        guard let storage else { return .inMemory }
        return .stored(
            directory: StorageLayout.directory(dataDirectory: storage.directory, namespace: namespace.name), configuration: storage, budget: openLogs
        )
    }

    /// Starts a snapshot of every namespace with writes its newest snapshot lacks; returns the
    /// names of those namespaces.
    func snapshotAll() -> [String] {
        namespaces.withLock { $0.byName.mapValues(\.namespace) }.sorted { $0.key < $1.key }.filter { $0.value.snapshotNow() }.map(\.key)
    }

    /// Brings the per-namespace tree sizes of the metrics up to date: every namespace that
    /// exists (holds data) is measured where it changed; transient ones are not namespaces yet,
    /// and one reading its cluster log keeps the size it had.
    func updateTreeSizes() {
        guard let metrics else { return }
        let existing = namespaces.withLock { $0.byName.values.filter(\.claimed).map(\.namespace) }
        var measured: [(name: String, version: UInt64, root: Node)] = []
        var unmeasured: [String] = []
        for namespace in existing {
            if let sample = namespace.sizeSample() {
                measured.append((namespace.name, sample.version, sample.root))
            } else {
                unmeasured.append(namespace.name)
            }
        }
        metrics.treeSizes.update(measured, unmeasured: unmeasured)
    }

    /// The namespaces that exist (written to, or found on disk), in name order: what a backup
    /// covers. Transient ones are not namespaces yet.
    func existingNamespaces() -> [Namespace] {
        namespaces.withLock { $0.byName.values.filter(\.claimed).map(\.namespace) }.sorted { $0.name < $1.name }
    }

    /// The names of the namespaces that exist or are in use, sorted.
    var names: [String] { namespaces.withLock { Array($0.byName.keys) }.sorted() }

    /// Waits until every namespace's writes and snapshots are on disk, then lets go of the data
    /// directory.
    func drain() {
        for namespace in namespaces.withLock({ $0.byName.values.map(\.namespace) }) { namespace.drainStorage() }
        lock.withLock { held in
            held?.release()
            held = nil
        }
    }

    /// Leaves the cluster (after `drain`): each namespace waits for its writes in flight and
    /// gives its lease back, then the NATS connection closes.
    func leaveCluster() async {
        guard let cluster else { return }
        for namespace in namespaces.withLock({ $0.byName.values.map(\.namespace) }) { await namespace.leaveCluster() }
        await cluster.close()
    }
}

/// What a namespace may ask of the registry that made it.
protocol NamespaceLifecycle: AnyObject, Sendable {
    /// Holds a place under the cap for a first write being decided; the refusal when full.
    func reserve(_ namespace: Namespace) -> String?
    /// The first write did not happen: give the place back.
    func unreserve(_ namespace: Namespace)
    /// Its first write: count it, and say where its storage goes.
    func claim(_ namespace: Namespace) -> NamespaceClaim
    /// One use of it ended.
    func released(_ namespace: Namespace)
}

/// Where a claimed namespace keeps its data.
enum NamespaceClaim: Sendable {
    /// Nowhere: an in-memory server.
    case inMemory
    /// In `directory`, its log open within `budget`.
    case stored(directory: String, configuration: StorageConfiguration, budget: OpenLogBudget)
}
