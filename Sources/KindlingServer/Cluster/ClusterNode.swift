import CoreMetrics
import KindlingCore
import Logging
import NATSClient
import Synchronization

/// This server's membership in a Kindling cluster: one NATS connection, the log stream and the
/// key-value buckets every namespace uses (names in docs/cluster.md).
///
/// Connecting creates the stream and buckets, or opens them when another node made them first,
/// so the first node to start sets the cluster up and the others join it.
final class ClusterNode: Sendable {
    /// The stream holding every namespace's committed writes, one subject per namespace.
    static let logStream = "KINDLING_LOG"
    /// The prefix of the namespaces' log subjects (`kindling.log.<namespace>`).
    static let logSubjectPrefix = "kindling.log."
    static let leaseBucket = "kindling_leases"
    static let nodeBucket = "kindling_nodes"
    static let registrationBucket = "kindling_ondisconnect"
    static let snapshotBucket = "kindling_snapshots"
    /// How long the stream remembers message ids, so a publish retried after a lost PubAck is
    /// stored once.
    static let duplicateWindow: Duration = .seconds(120)

    let configuration: ClusterConfiguration
    /// This process's name in `kindling_nodes` and in its onDisconnect registrations' keys: the
    /// node id and a random part. A node restarted with the same id is a new member, so the
    /// leaders run the registrations its earlier process left once that one's liveness key
    /// expires.
    let memberID: String
    let client: NATSClient
    let jetStream: JetStream
    /// Leases: key `<namespace>`, value the leader's node id, expiring after the lease time.
    let leases: KeyValue
    /// Liveness: key `<node id>`, renewed with the node's leases.
    let nodes: KeyValue
    /// onDisconnect registrations: key `<namespace>.<node id>.<connection>`, value the
    /// connection's queued writes (see `Namespace.persistRegistrations`); no expiry.
    let registrations: KeyValue
    /// Snapshots: object `<namespace>`, a `ClusterSnapshot`.
    let snapshots: ObjectStore
    /// How many copies of the stream and buckets JetStream keeps: min(3, NATS servers).
    let replicas: Int
    /// The largest message the NATS server takes (its max_payload, 1 MB by default).
    let maxPayload: Int
    /// The largest batch of log records in one publish, leaving room for the headers.
    var maxBatchBytes: Int { max(1024, maxPayload - 4096) }
    /// The largest write a namespace takes (its record as stored): one record must fit in one
    /// publish, with room for its path and framing.
    var maxWriteBytes: Int { max(1024, maxPayload - 8192) }
    let logger: Logger
    let metrics: ServerMetrics?
    /// Replies to requests (a leader's answers to forwarded writes), sent in order by one task
    /// (`replier`), so `close` sends every reply handed over before it, where a task per reply
    /// could still be waiting to run when the connection closes, its follower then waiting for
    /// its request's timeout.
    private let replies: AsyncStream<(subject: String, payload: [UInt8])>.Continuation
    private let replier: Task<Void, Never>
    /// Keeps this node's key in `kindling_nodes` alive while it runs.
    private let heartbeat = Mutex<Task<Void, Never>?>(nil)
    /// Follows the NATS connection's ups and downs (`isConnected`).
    private let watcher = Mutex<Task<Void, Never>?>(nil)
    private let connected = Atomic<Bool>(true)

    /// False while the NATS connection is down (the client is trying the servers again): this
    /// node can then neither acknowledge writes nor see others', so `/.ready` says so and a load
    /// balancer sends its clients elsewhere.
    var isConnected: Bool { connected.load(ordering: .relaxed) }

    private init(
        configuration: ClusterConfiguration, client: NATSClient, jetStream: JetStream, leases: KeyValue, nodes: KeyValue, registrations: KeyValue,
        snapshots: ObjectStore, replicas: Int, maxPayload: Int, logger: Logger, metrics: ServerMetrics?
    ) {
        self.configuration = configuration
        self.memberID = configuration.nodeID + "-" + ClusterConfiguration.randomNodeID().prefix(8)
        self.client = client
        self.jetStream = jetStream
        self.leases = leases
        self.nodes = nodes
        self.registrations = registrations
        self.snapshots = snapshots
        self.replicas = replicas
        self.maxPayload = maxPayload
        self.metrics = metrics
        self.logger = logger
        let (pending, replies) = AsyncStream.makeStream(of: (subject: String, payload: [UInt8]).self)
        self.replies = replies
        self.replier = Task {
            for await reply in pending { try? await client.publish(reply.subject, payload: reply.payload) }
        }
    }

    /// Sends `payload` to `subject`, a request's reply inbox, after the replies handed over
    /// before it; `close` sends it before the connection closes.
    func reply(to subject: String, payload: [UInt8]) {
        replies.yield((subject, payload))
    }

    /// The subject the leader of `namespace` takes forwarded writes on.
    static func rpcSubject(_ namespace: String) -> String { "kindling.rpc." + namespace }

    /// The key of a connection's onDisconnect registrations in `kindling_ondisconnect`.
    func registrationKey(_ namespace: String, _ connection: ConnectionID) -> String {
        "\(namespace).\(memberID).\(connection.value)"
    }

    /// The subject of `namespace`'s log.
    static func logSubject(_ namespace: String) -> String { logSubjectPrefix + namespace }

    /// Connects to NATS and creates (or opens) the stream and buckets. Throws `unreachable`
    /// when no server answers, so the server refuses to start instead of serving without its log.
    static func connect(_ configuration: ClusterConfiguration, logger: Logger, metrics: ServerMetrics? = nil) async throws(ClusterError)
        -> ClusterNode
    {
        guard !configuration.urls.isEmpty else { throw .invalid("--cluster needs at least one nats:// URL") }
        guard ClusterConfiguration.isValidNodeID(configuration.nodeID) else {
            throw .invalid("--node-id must be 1 to 64 letters, digits, '-' or '_' (got \"\(configuration.nodeID)\")")
        }
        guard configuration.leaseTime >= .milliseconds(300) else { throw .invalid("the lease time must be at least 0.3 s") }
        var options = NATSOptions(servers: configuration.connectionOrder)
        options.name = "kindling-\(configuration.nodeID)"
        options.reconnectWait = .milliseconds(50)
        options.maxReconnectWait = .milliseconds(500)
        // A stalled link (open, silent) is left within about three pings, not the server's
        // two-minute ping timeout: a leader behind it would hold its writes meanwhile.
        options.pingInterval = max(.milliseconds(250), configuration.leaseTime / 4)
        let client: NATSClient
        do {
            client = try await NATSClient.connect(options)
        } catch {
            throw .unreachable(urls: configuration.urls, detail: "\(error)")
        }
        await warnAboutTheServer(client, logger: logger)
        if configuration.requireFsync {
            do throws(ClusterError) {
                try await checkDurability(configuration, logger: logger)
            } catch {
                await client.close()
                throw error
            }
        }
        // The servers the connected one advertises (itself included), or the URLs given when
        // it advertises none (a single server outside a cluster).
        let advertised = await client.serverInfo?.connectURLs.count ?? 0
        let replicas = min(3, max(1, advertised, configuration.urls.count))
        let jetStream = JetStream(client: client, timeout: .seconds(5))
        // NATS may be electing leaders (a server was just lost): its JetStream API then times
        // out or has no responders for a few seconds. JetStream recovering its streams after a
        // restart answers 503 ("temporarily unavailable", 10008). A cluster still forming
        // (started with this node, say) refuses to place replicas until its last server has
        // joined. Each way the setup is retried for a while.
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            do throws(JetStreamError) {
                return try await setUp(configuration, client: client, jetStream: jetStream, replicas: replicas, logger: logger, metrics: metrics)
            } catch {
                let transient = error.natsError != nil || error.isTemporary || error.apiError?.errCode == JetStreamAPIError.noSuitablePeers
                if transient, ContinuousClock.now < deadline {
                    logger.warning(
                        "NATS JetStream is not ready yet (electing leaders, recovering, or a server not yet joined); retrying",
                        metadata: ["error": "\(error)"])
                    try? await Task.sleep(for: .milliseconds(500))
                    continue
                }
                await client.close()
                if error.natsError != nil { throw .unreachable(urls: configuration.urls, detail: "\(error)") }
                throw .setup("\(error)")
            }
        }
    }

    /// Logs the NATS server's version, with a warning for one known to fall short of what
    /// Kindling promises (`NATSServerVersion.concerns`), and, once, what an acknowledgement
    /// means: JetStream fsyncs before acknowledging only with `sync_interval: always`, a server
    /// setting its clients cannot see (docs/cluster.md).
    private static func warnAboutTheServer(_ client: NATSClient, logger: Logger) async {
        let info = await client.serverInfo
        let text = info?.version ?? "unknown"
        let metadata: Logger.Metadata = ["nats-version": "\(text)", "server": "\(info?.serverName ?? "?")"]
        guard let version = NATSServerVersion(text) else {
            return logger.warning("cannot read the NATS server's version; Kindling needs nats-server 2.11 or later", metadata: metadata)
        }
        for concern in version.concerns { logger.warning("\(concern)", metadata: metadata) }
        logger.notice(
            "writes are acknowledged once a quorum of the NATS servers stored them; they are on disk (fsynced) only when the servers run JetStream with sync_interval: always",
            metadata: metadata)
    }

    /// `--require-fsync`: asks each NATS server named in the configuration for its settings on
    /// its monitoring port (`NATSMonitor`) and throws `notDurable` unless a quorum of them
    /// answer and every one answering fsyncs each write and runs a version Kindling does not
    /// warn about.
    static func checkDurability(_ configuration: ClusterConfiguration, logger: Logger) async throws(ClusterError) {
        var hosts: [String] = []
        for url in configuration.urls {
            guard let address = try? NATSServerAddress(parsing: url), !hosts.contains(address.host) else { continue }
            hosts.append(address.host)
        }
        var confirmed = 0
        var failures: [String] = []
        for host in hosts {
            let monitor = NATSMonitor(host: host, port: configuration.natsMonitorPort)
            let varz: NATSMonitor.Varz
            do {
                varz = try await monitor.varz()
            } catch {
                logger.warning("cannot confirm a NATS server's durability: \(error)")
                continue
            }
            let concerns = NATSServerVersion(varz.version)?.concerns ?? ["its version \(varz.version) cannot be read"]
            if !varz.syncsAlways {
                failures.append("\(host) (nats-server \(varz.version)) acknowledges writes before it fsyncs them (no sync_interval: always)")
            } else if let concern = concerns.first {
                failures.append("\(host): \(concern)")
            } else {
                confirmed += 1
            }
        }
        guard failures.isEmpty else { throw .notDurable(failures.joined(separator: "; ")) }
        guard confirmed > hosts.count / 2 else {
            throw .notDurable(
                "only \(confirmed) of the \(hosts.count) NATS servers could be asked on their monitoring port \(configuration.natsMonitorPort)")
        }
        logger.notice("the NATS servers fsync each write before acknowledging it", metadata: ["confirmed": "\(confirmed) of \(hosts.count)"])
    }

    /// Creates or opens the stream and buckets, and announces the node.
    private static func setUp(
        _ configuration: ClusterConfiguration, client: NATSClient, jetStream: JetStream, replicas: Int, logger: Logger, metrics: ServerMetrics?
    ) async throws(JetStreamError) -> ClusterNode {
        do {
            var log = StreamConfig(name: logStream, subjects: [logSubjectPrefix + ">"])
            log.storage = .file
            log.replicas = replicas
            log.duplicateWindow = duplicateWindow
            try await createOrOpen(jetStream, log)
            var leaseConfig = KeyValueConfig(bucket: leaseBucket)
            leaseConfig.ttl = configuration.leaseTime
            leaseConfig.replicas = replicas
            var nodeConfig = KeyValueConfig(bucket: nodeBucket)
            nodeConfig.ttl = configuration.leaseTime
            nodeConfig.replicas = replicas
            let leases = try await createOrOpen(jetStream, leaseConfig)
            let nodes = try await createOrOpen(jetStream, nodeConfig)
            var registrationConfig = KeyValueConfig(bucket: registrationBucket)
            registrationConfig.replicas = replicas
            let registrations = try await createOrOpen(jetStream, registrationConfig)
            var snapshotConfig = ObjectStoreConfig(bucket: snapshotBucket)
            snapshotConfig.replicas = replicas
            let snapshots = try await createOrOpen(jetStream, snapshotConfig)
            logger.notice(
                "joined the cluster",
                metadata: ["node": "\(configuration.nodeID)", "replicas": "\(replicas)", "nats": "\(configuration.urls.joined(separator: ","))"]
            )
            let node = ClusterNode(
                configuration: configuration, client: client, jetStream: jetStream, leases: leases, nodes: nodes, registrations: registrations,
                snapshots: snapshots, replicas: replicas,
                maxPayload: await client.maxPayload, logger: logger, metrics: metrics)
            try await nodes.put(node.memberID, [])
            node.startHeartbeat()
            await node.watchConnection()
            return node
        }
    }

    /// Creates the stream, or opens it when it exists with other settings (made by a node with
    /// another version or lease time): the existing one is used as it is.
    private static func createOrOpen(_ jetStream: JetStream, _ config: StreamConfig) async throws(JetStreamError) {
        do {
            _ = try await jetStream.createStream(config)
        } catch {
            guard error.apiError?.errCode == JetStreamAPIError.streamNameInUse else { throw error }
            _ = try await jetStream.streamInfo(config.name)
        }
    }

    private static func createOrOpen(_ jetStream: JetStream, _ config: KeyValueConfig) async throws(JetStreamError) -> KeyValue {
        do {
            return try await jetStream.createKeyValue(config)
        } catch {
            guard error.apiError?.errCode == JetStreamAPIError.streamNameInUse else { throw error }
            return try await jetStream.keyValue(config.bucket)
        }
    }

    private static func createOrOpen(_ jetStream: JetStream, _ config: ObjectStoreConfig) async throws(JetStreamError) -> ObjectStore {
        do {
            return try await jetStream.createObjectStore(config)
        } catch {
            guard error.apiError?.errCode == JetStreamAPIError.streamNameInUse else { throw error }
            return try await jetStream.objectStore(config.bucket, chunkSize: config.chunkSize)
        }
    }

    /// Renews this node's liveness key every third of the lease time (its expiry tells the
    /// leaders that the node's onDisconnect registrations are theirs to run).
    ///
    /// The renewal is also this node's probe of its NATS server: a write to a replicated
    /// bucket, it needs the server's JetStream to reach a quorum of its peers. A server cut off
    /// from its peers (a route partition) still answers its clients, so nothing else would make
    /// the node leave it, and none of its writes would be acknowledged until the partition
    /// heals. So a renewal that times out or is refused as unavailable is tried again at once,
    /// and when that fails too the node leaves the server for another (`NATSClient.leaveServer`).
    private func startHeartbeat() {
        let period = configuration.leaseTime / 3
        // Short, so a server without its peers is left within about two periods.
        let probe = nodes.withTimeout(max(.seconds(1), period))
        let task = Task { [client, memberID, logger] in
            var failures = 0
            while !Task.isCancelled {
                if failures != 1 {
                    do {
                        try await Task.sleep(for: period)
                    } catch {
                        return
                    }
                }
                do throws(JetStreamError) {
                    try await probe.put(memberID, [])
                    failures = 0
                } catch {
                    guard error.isTemporary, await client.isConnected else {
                        logger.warning("could not renew this node's liveness key: \(error)")
                        failures = 0
                        continue
                    }
                    failures += 1
                    guard failures >= 2 else { continue }
                    failures = 0
                    let server = await client.connectedAddress.map { "\($0)" } ?? "?"
                    logger.warning(
                        "the NATS server gets no writes through (cut off from its JetStream peers?); moving to another server",
                        metadata: ["server": "\(server)", "error": "\(error)"])
                    await client.leaveServer()
                }
            }
        }
        heartbeat.withLock { $0 = task }
    }

    /// Keeps `isConnected` up to date, and logs each loss and recovery of the connection.
    private func watchConnection() async {
        metrics?.clusterConnected.set(1)
        let events = await client.connectionEvents()
        let task = Task { [weak self, logger] in
            for await event in events {
                guard let self else { return }
                switch event {
                case .connected, .reconnected(_):
                    self.metrics?.clusterConnected.set(1)
                    if !self.connected.exchange(true, ordering: .relaxed) {
                        logger.notice("connected to NATS again", metadata: ["event": "\(event)"])
                    }
                case .disconnected, .closed:
                    self.connected.store(false, ordering: .relaxed)
                    self.metrics?.clusterConnected.set(0)
                    logger.warning("lost the connection to NATS; trying the servers again", metadata: ["event": "\(event)"])
                }
            }
        }
        watcher.withLock { $0 = task }
    }

    /// Closes the NATS connection (at shutdown, after the namespaces gave up their leases),
    /// once every reply handed over is sent.
    func close() async {
        replies.finish()
        await replier.value
        heartbeat.withLock { task in
            task?.cancel()
            task = nil
        }
        watcher.withLock { task in
            task?.cancel()
            task = nil
        }
        try? await nodes.purge(memberID)
        await client.drain()
    }
}
