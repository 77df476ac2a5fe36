import Dispatch
import KindlingCore
import KindlingProtocol
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import Synchronization

/// A running Kindling server: one port serving the realtime protocol at `/.ws` and HTTP
/// everywhere else.
public final class KindlingServer: Sendable {
    public let configuration: ServerConfiguration
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    /// The threads that render and parse big REST bodies off the event loops (a test holds
    /// them to see a request answered while a big one waits for them).
    let workers: NIOThreadPool
    private let tls: ServerTLS?
    let registry: NamespaceRegistry
    private let health: ServerHealth
    /// The connections over the limit being answered 503 (in-process tests watch them).
    let overLimit: OverLimitConnections
    private let perEventLoop: PerEventLoop
    private let memoryReturn: FreedMemoryReturn
    private let lifecycle: Mutex<ServerLifecycle>
    /// Scheduled backups (`configuration.backup`); nil without.
    let backups: BackupScheduler?

    /// The port actually bound (useful when the configuration asked for 0).
    public var port: Int { channel.localAddress?.port ?? configuration.port }

    private init(
        configuration: ServerConfiguration, group: MultiThreadedEventLoopGroup, channel: any Channel, workers: NIOThreadPool, tls: ServerTLS?,
        registry: NamespaceRegistry, health: ServerHealth, overLimit: OverLimitConnections, perEventLoop: PerEventLoop,
        memoryReturn: FreedMemoryReturn, lifecycle: ServerLifecycle, backups: BackupScheduler?
    ) {
        self.backups = backups
        self.lifecycle = Mutex(lifecycle)
        self.overLimit = overLimit
        self.memoryReturn = memoryReturn
        self.health = health
        self.perEventLoop = perEventLoop
        self.configuration = configuration
        self.tls = tls
        self.group = group
        self.channel = channel
        self.workers = workers
        self.registry = registry
    }

    /// Binds and starts serving. Refuses to start unprotected on an address other computers can
    /// reach (see `ProtectedMode`).
    ///
    /// With `configuration.tls`, the certificate and key are loaded and checked first, so a
    /// bad file or a key that does not match refuses the start (`TLSFileError`).
    public static func start(_ configuration: ServerConfiguration) async throws -> KindlingServer {
        try ProtectedMode.check(configuration)
        let verifier = try CredentialVerifier(settings: configuration.auth)
        let tls = try configuration.tls.map { files throws(TLSFileError) in try ServerTLS(files: files) }
        if let certificate = tls?.summary {
            configuration.logger.info("serving TLS with the certificate \(certificate)")
            if certificate.isExpired { configuration.logger.warning("the TLS certificate has expired: clients will refuse it (\(certificate))") }
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, configuration.eventLoopThreads))
        let cleanup = ServerStartCleanup(group: group)
        do {
            return try await start(configuration, verifier: verifier, tls: tls, group: group, cleanup: cleanup)
        } catch {
            await cleanup.run()
            throw error
        }
    }

    /// The rest of `start`, once the event loops run: what it acquires goes into `cleanup`,
    /// which `start` runs should this throw.
    private static func start(
        _ configuration: ServerConfiguration, verifier: CredentialVerifier, tls: ServerTLS?, group: MultiThreadedEventLoopGroup,
        cleanup: ServerStartCleanup
    ) async throws -> KindlingServer {
        var lifecycle = ServerLifecycle()
        // Raised first, so the logs' and the connections' shares come from the limit in force.
        let descriptors = DescriptorLimit.raise()
        let metrics = ServerMetrics(topNamespaces: configuration.metricsTopNamespaces)
        var cluster: ClusterNode?
        if let clusterConfiguration = configuration.cluster {
            guard configuration.storage == nil else {
                throw ClusterError.invalid(
                    "cluster mode keeps no local data directory: its log is the NATS stream (leave out --data-dir with --cluster)")
            }
            cluster = try await ClusterNode.connect(clusterConfiguration, logger: configuration.logger, metrics: metrics)
        }
        var limits = configuration.connectionLimits
        limits.maxAnswerBytes = configuration.maxPendingOutboundBytes
        // Requests in progress: bodies and messages partly received, their parsing, and the
        // answers to reads a namespace has made and not yet handed to their connections.
        let budget = InFlightBudget(limit: configuration.inFlightBudgetBytes)
        let registry = NamespaceRegistry(
            logger: configuration.logger, storage: configuration.storage, rules: configuration.defaultRules,
            rulesDebug: configuration.rulesDebug, rulesCoverage: configuration.rulesCoverage, limits: limits,
            maxNamespaces: configuration.maxNamespaces,
            openLogs: OpenLogBudget(limit: DescriptorLimit.logs(under: descriptors)), answerBudget: budget, metrics: metrics, cluster: cluster
        )
        cleanup.registry = registry
        try registry.recoverAll()
        let backups = try configuration.backup.map { backup throws(BackupError) in
            guard cluster == nil else { throw BackupError.invalidSettings("backups are not available in cluster mode yet") }
            return try BackupScheduler(
                configuration: backup, registry: registry, metrics: BackupMetrics(registry: metrics.registry), logger: configuration.logger)
        }
        let perEventLoop = PerEventLoop(idleTimeout: configuration.idleTimeout, parseBudget: budget)
        let maxConnections = configuration.maxConnections ?? DescriptorLimit.connections(under: descriptors)
        let workers = NIOThreadPool(numberOfThreads: 2)
        workers.start()
        cleanup.workers = workers
        let resources = ServerResources(
            budget: budget,
            backlogBudget: InFlightBudget(limit: configuration.pendingOutboundBudgetBytes),
            idle: IdleConnections(),
            overLimit: OverLimitConnections(limit: maxConnections),
            maxConnections: maxConnections,
            policy: BrowserAccessPolicy(configuration: configuration),
            workers: workers,
            verifier: verifier,
            metrics: metrics,
            health: ServerHealth(metrics: metrics, cluster: cluster),
            perEventLoop: perEventLoop,
            longPolls: LongPollSessions(limit: maxConnections)
        )
        let logger = configuration.logger
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 1024)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptPauseHandler(pause: .milliseconds(100), logger: logger))
                    try channel.pipeline.syncOperations.addHandler(
                        ConnectionLimitHandler(limit: maxConnections, idle: resources.idle, overLimit: resources.overLimit, logger: logger))
                }
            }
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(ChannelOptions.maxMessagesPerRead, value: 16)
            // Each connection keeps its receive buffer between reads: start it small, so an idle
            // connection costs little; it grows while a connection reads a lot.
            .childChannelOption(ChannelOptions.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 256, maximum: 65_536))
            .childChannelInitializer { channel in
                KindlingServer.configure(
                    channel, registry: registry, perEventLoop: perEventLoop, resources: resources, tls: tls?.context, configuration: configuration)
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
        } catch {
            throw ListenFailure(error, host: configuration.host, port: configuration.port)
        }
        lifecycle.bound()
        let server = KindlingServer(
            configuration: configuration, group: group, channel: channel, workers: workers, tls: tls, registry: registry, health: resources.health,
            overLimit: resources.overLimit, perEventLoop: perEventLoop,
            // Checked every 10 s; 64 MiB free is well past what steady work leaves in the
            // arenas, so only what a burst freed is trimmed.
            memoryReturn: FreedMemoryReturn(
                eventLoop: group.any(), workers: workers, interval: .seconds(10), threshold: 64 << 20, logger: configuration.logger
            ),
            lifecycle: lifecycle,
            backups: backups
        )
        backups?.start()
        return server
    }

    /// Stops serving, in the order a load balancer and the clients need: readiness (`/.ready`)
    /// turns 503, the port stops accepting, every connection is closed (realtime ones with a
    /// "going away" close frame first; their onDisconnect writes run, as on any close), the
    /// event loops stop, and every namespace's log is written and synced. Returns false when
    /// the logs and snapshots were not all on disk within `limit` (a slow disk, a large
    /// snapshot): the server is stopped anyway, and what was not acknowledged is lost as in a
    /// crash. (A log whose disk refuses writes does not hold this up: its queued writes were
    /// never acknowledged.) A second call does nothing again: it waits for the first and
    /// answers its outcome.
    @discardableResult
    public func shutdown(within limit: Duration = .seconds(10)) async throws -> Bool {
        let action = lifecycle.withLock { lifecycle in
            lifecycle.shutDown {
                Task {
                    do {
                        let drained = try await self.drain(within: limit)
                        self.lifecycle.withLock { $0.drainEnded(drained: drained) }
                        return drained
                    } catch {
                        self.lifecycle.withLock { $0.drainEnded(drained: false) }
                        throw error
                    }
                }
            }
        }
        switch action {
        case .wait(let drain): return try await drain.value
        case .answer(let drained): return drained
        }
    }

    /// The one drain `shutdown` runs, in the order it describes.
    private func drain(within limit: Duration) async throws -> Bool {
        let started = ContinuousClock.now
        health.startDraining()
        await backups?.stop()
        try? await channel.close()
        // Half the time allowed at most: the logs still have to be synced.
        await perEventLoop.closeAll(reason: "server shutting down", within: limit / 2)
        memoryReturn.cancel()
        // Shutting the loops down closes each channel on its own loop, which detaches its
        // connection from its namespace first: the onDisconnect writes are queued on the
        // namespaces' queues before the drain below waits on them.
        try await group.shutdownGracefully()
        try await workers.shutdownGracefully()
        let registry = self.registry
        let drained = await DrainDeadline.run(within: limit - (ContinuousClock.now - started)) { registry.drain() }
        await registry.leaveCluster()
        return drained
    }

    /// Starts a snapshot of every namespace that has writes its newest snapshot lacks (an
    /// operator's `kindling snapshot` or SIGUSR1), so the log can be cut before it would be by
    /// size or age. Returns the namespaces snapshotted; the files appear in the background.
    @discardableResult
    public func snapshot() -> [String] { registry.snapshotAll() }

    /// The process id of the server running on `dataDirectory`, or nil when none runs there
    /// (how `kindling snapshot` finds the server to signal).
    public static func runningServer(dataDirectory: String) throws -> Int32? {
        try DataDirectoryLock.holder(of: dataDirectory)
    }

    /// The names of the namespaces in use.
    public var namespaces: [String] { registry.names }

    /// Puts new server rules in force (a reloaded `--rules` file) in every namespace without
    /// rules of its own; live listens that lose read access are cancelled.
    public func replaceRules(_ rules: RulesDocument) {
        registry.setDefaultRules(rules, open: false)
    }

    /// The certificate served now, or nil without TLS.
    public var tlsCertificate: TLSCertificateSummary? { tls?.summary }

    /// Reads the TLS certificate and key files again (a renewed certificate, on SIGHUP) and
    /// serves new connections with them; open connections keep the certificate they started
    /// with. Files that do not load throw, and the certificate in force stays. Returns the new
    /// certificate, or nil when the server does not serve TLS.
    @discardableResult
    public func reloadTLS() throws(TLSFileError) -> TLSCertificateSummary? {
        try tls?.reload()
    }

    private static func configure(
        _ channel: any Channel, registry: NamespaceRegistry, perEventLoop: PerEventLoop, resources: ServerResources, tls: NIOSSLContext?,
        configuration: ServerConfiguration
    ) -> EventLoopFuture<Void> {
        let upgrader = WebSocketUpgrader(
            shouldUpgrade: { channel, head in
                // An invalid namespace name is not upgraded: the HTTP handler answers 400.
                let target = RequestTarget(uri: head.uri)
                let name = RequestTarget.namespace(
                    parameters: target.parameters, host: head.headers.first(name: "host"), fallback: configuration.defaultNamespace)
                // A WebSocket taking a long-polling session over (`s=`) must name one that is open.
                let takesOver = target.parameters["s"].map { resources.longPolls.session($0)?.namespace.name == name } ?? true
                return channel.eventLoop.makeSucceededFuture(target.path == "/.ws" && NamespaceName.isValid(name) && takesOver ? HTTPHeaders() : nil)
            },
            pipeline: { channel, head in
                let target = RequestTarget(uri: head.uri)
                let host = head.headers.first(name: "host")
                let name = RequestTarget.namespace(parameters: target.parameters, host: host, fallback: configuration.defaultNamespace)
                let handshakeHost = host ?? "\(configuration.host):\(channel.localAddress?.port ?? configuration.port)"
                let shares = perEventLoop.shares(of: channel.eventLoop)
                // The channel is unwritable while more than the pause mark waits: the session
                // then stops reading requests until the reader catches up, and checks what
                // waits against its limit and the server-wide budget.
                let pause = WebSocketSessionHandler.pauseMark(limit: configuration.maxPendingOutboundBytes)
                try channel.syncOptions?.setOption(
                    ChannelOptions.writeBufferWaterMark,
                    value: ChannelOptions.Types.WriteBufferWaterMark(low: pause / 2, high: pause)
                )
                let takingOver = target.parameters["s"].flatMap(resources.longPolls.session)
                // One use of the namespace, which the session's detach ends (a WebSocket taking
                // a long-polling session over uses that session's).
                let session = WebSocketSessionHandler(
                    namespace: takingOver?.namespace ?? registry.namespace(name),
                    outbox: shares.outbox,
                    inbox: shares.inbox,
                    idleSweep: shares.idleSweep,
                    handshakeHost: handshakeHost,
                    lastSession: target.parameters["ls"].flatMap(SessionID.init),
                    verifier: resources.verifier,
                    budget: resources.budget,
                    backlogBudget: resources.backlogBudget,
                    metrics: resources.metrics,
                    configuration: configuration,
                    takingOver: takingOver
                )
                try channel.pipeline.syncOperations.addHandler(session)
            }
        )
        let httpHandlerName = "kindling.http"
        return channel.eventLoop.makeCompletedFuture {
            if let tls {
                // TLS first: everything after it sees plain bytes, as without TLS.
                try channel.pipeline.syncOperations.addHandler(PlainTextRefusalHandler(logger: configuration.logger))
                try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                try channel.pipeline.syncOperations.addHandler(TLSErrorFilter(logger: configuration.logger))
            }
            if resources.overLimit.contains(channel) {
                try channel.pipeline.syncOperations.addHandler(HTTPResponseEncoder())
                try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
                try channel.pipeline.syncOperations.addHandler(OverLimitResponder(limit: resources.maxConnections))
                return
            }
            // SwiftNIO's server pipeline, with Kindling's own handlers between the request
            // decoder and the upgrade: all of them are HTTP-only and leave on an upgrade.
            let responseEncoder = HTTPResponseEncoder()
            let bodyBudget = HTTPBodyBudgetHandler(budget: resources.budget, logger: configuration.logger)
            let httpOnly: [any RemovableChannelHandler] = [
                ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes)),
                HTTPServerPipelineHandler(),
                NIOHTTPResponseHeadersValidator(),
                HTTPErrorResponder(),
                HTTPTimeoutHandler(configuration: configuration, idle: resources.idle),
                BrowserGuardHandler(policy: resources.policy, logger: configuration.logger),
                HTTPBackpressureHandler(),
                bodyBudget,
            ]
            let requests = HTTPRequestHandler(registry: registry, resources: resources, bodyBudget: bodyBudget, configuration: configuration)
            let upgrade = HTTPServerUpgradeHandler(
                upgraders: [upgrader],
                httpEncoder: responseEncoder,
                extraHTTPHandlers: httpOnly,
                upgradeCompletionHandler: { context in
                    context.pipeline.syncOperations.removeHandler(name: httpHandlerName, promise: nil)
                }
            )
            try channel.pipeline.syncOperations.addHandler(responseEncoder)
            try channel.pipeline.syncOperations.addHandlers(httpOnly)
            try channel.pipeline.syncOperations.addHandler(upgrade)
            try channel.pipeline.syncOperations.addHandler(requests, name: httpHandlerName)
        }
    }
}

extension KindlingServer {
    /// Commits `count` small writes to `namespace` as a client would, for benchmarks that need a
    /// log behind a snapshot.
    public func writeForBenchmark(namespace name: String, count: Int) async throws {
        let namespace = registry.namespace(name)
        for index in 0..<count {
            let path = try Path("log/w\(index % 1000)")
            namespace.submit(ConnectionID(value: -1), [.operation(number: nil, .set(path: path, data: .number(Double(index)), precondition: nil))])
        }
        namespace.drainStorage()
        registry.released(namespace)
    }
}
