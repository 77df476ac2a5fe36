import KindlingCore
import Logging

/// How a Kindling server runs.
public struct ServerConfiguration: Sendable {
    /// The address to listen on (`127.0.0.1` keeps it local; `0.0.0.0` serves the network).
    public var host: String
    /// The port (0 picks a free one, for tests).
    public var port: Int
    /// Durable storage; nil keeps everything in memory (tests, throwaway servers).
    public var storage: StorageConfiguration?
    /// The namespace of a request that names none (no `ns`, no usable Host label).
    public var defaultNamespace: String
    /// The most bytes a connection may have waiting to be written before it is treated as a
    /// reader that fell behind and is disconnected.
    public var maxPendingOutboundBytes: Int
    /// The largest single WebSocket frame accepted from a client.
    public var maxFrameBytes: Int
    /// The largest message (after reassembly) accepted from a client.
    public var maxMessageBytes: Int
    /// How long a realtime connection may stay silent before it is taken for dead and closed (its
    /// onDisconnect writes then run). The SDKs send a keepalive after 45 s without traffic.
    public var idleTimeout: Duration
    /// The largest REST request body (256 MB, the hosted service's REST write limit). A larger
    /// body is refused with 413 as soon as its size is known, without buffering it.
    public var maxRESTBodyBytes: Int
    /// How often an event stream with nothing else to say sends a keep-alive. firebase-admin's
    /// `close()` on a listener returns only when more bytes arrive, so this bounds how long it takes.
    public var eventStreamKeepAlive: Duration
    /// The largest single event a stream may be sent; a larger one cancels the stream instead.
    public var maxEventBytes: Int
    /// Event-loop threads for network I/O.
    public var eventLoopThreads: Int
    /// How long a plain HTTP connection may take to deliver a request's headers, from when it
    /// connects: a silent or slowloris connection is closed after it.
    public var headerTimeout: Duration
    /// How long a request's body may take to arrive in full, from its headers.
    public var bodyTimeout: Duration
    /// How long a kept-alive HTTP connection may wait for its next request after a response.
    public var keepAliveTimeout: Duration
    /// Browser origins allowed besides the loopback ones (`http(s)://localhost`, `127.0.0.1`,
    /// `[::1]`, any port), for CORS and the WebSocket upgrade; `*` allows every origin. A
    /// request without `Origin` (not from a browser) is not affected.
    public var corsOrigins: [String]
    /// Host names accepted besides `localhost`, `127.0.0.1`, `[::1]` and `*.localhost` while the
    /// server listens on loopback (so a DNS-rebinding page cannot reach it); `*` accepts any.
    public var allowedHosts: [String]
    /// The most connections open at once; nil keeps a reserve below the process's descriptor
    /// limit. A connection over it is closed at once (the oldest idle HTTP one goes first).
    public var maxConnections: Int?
    /// Bytes of partly received request bodies and realtime messages the whole server may hold
    /// at once; a connection whose next bytes would exceed it is refused (503, or close 1013).
    public var inFlightBudgetBytes: Int
    /// Bytes waiting to be sent to realtime readers that fell behind, across the whole server:
    /// a connection with more than a little waiting whose backlog would exceed it is
    /// disconnected, so many connections each within `maxPendingOutboundBytes` cannot together
    /// exhaust memory.
    public var pendingOutboundBudgetBytes: Int
    /// REST bodies and responses larger than this are parsed and rendered on a worker thread,
    /// so the event loop keeps serving other connections meanwhile.
    public var offLoopBytes: Int
    /// The most namespaces the server holds. Reads of a namespace that does not exist create
    /// nothing; the first write to a new namespace over this cap is refused (REST 507, realtime
    /// `unavailable`), so clients cannot fill the disk or the descriptor table with databases.
    public var maxNamespaces: Int
    /// How credentials are verified, and whether the server runs in emulator mode (by default:
    /// nothing configured, so emulator mode exactly when `host` is loopback).
    public var auth: AuthSettings
    /// The security rules of every namespace that has none of its own; nil for none (then open
    /// in emulator mode or with `allowOpen`, else everything but admin access is denied).
    public var rules: RulesDocument?
    /// Open rules even outside emulator mode when no rules are given (`--allow-open`).
    public var allowOpen: Bool
    /// Log the rule trace of every denied request (`--rules-debug`).
    public var rulesDebug: Bool
    /// Record rules coverage: every expression the rules evaluate for a request counts, per
    /// namespace, for `GET /.inspect/coverage.json` (`--rules-coverage`; `kindling serve` turns it
    /// on in emulator mode). Off, rules are loaded and evaluated without any of it.
    public var rulesCoverage: Bool
    /// What one realtime connection may hold.
    public var connectionLimits: ConnectionLimits
    /// Serve `https://` and `wss://` with this certificate and key instead of plain HTTP, on the
    /// same port; nil serves plain HTTP (the default, for loopback).
    public var tls: TLSFiles?
    /// How many of the largest namespaces get a `kindling_namespace_tree_bytes` series at
    /// `/.metrics` (a bound on the label's cardinality; the others are left out).
    public var metricsTopNamespaces: Int
    /// Serve as a node of a cluster on NATS JetStream (`--cluster`); nil for a single server.
    /// Cluster mode keeps no data directory (`storage` must be nil): the log is the stream.
    public var cluster: ClusterConfiguration?
    /// Scheduled backups of every namespace holding data (`--backup-dir`); nil for none.
    public var backup: BackupConfiguration?
    public var logger: Logger

    public init(
        host: String = "127.0.0.1",
        port: Int = 9000,
        storage: StorageConfiguration? = nil,
        defaultNamespace: String = "kindling",
        maxPendingOutboundBytes: Int = 64 * 1024 * 1024,
        maxFrameBytes: Int = 16 * 1024 * 1024 + 64 * 1024,
        maxMessageBytes: Int = 16 * 1024 * 1024 + 64 * 1024,
        idleTimeout: Duration = .seconds(120),
        maxRESTBodyBytes: Int = 256 * 1024 * 1024,
        eventStreamKeepAlive: Duration = .seconds(10),
        maxEventBytes: Int = 512 * 1024 * 1024,
        eventLoopThreads: Int = 2,
        headerTimeout: Duration = .seconds(20),
        bodyTimeout: Duration = .seconds(60),
        keepAliveTimeout: Duration = .seconds(60),
        corsOrigins: [String] = [],
        allowedHosts: [String] = [],
        maxConnections: Int? = nil,
        inFlightBudgetBytes: Int = 1024 * 1024 * 1024,
        pendingOutboundBudgetBytes: Int = 1024 * 1024 * 1024,
        offLoopBytes: Int = 1024 * 1024,
        maxNamespaces: Int = 10_000,
        auth: AuthSettings? = nil,
        rules: RulesDocument? = nil,
        allowOpen: Bool = false,
        rulesDebug: Bool = false,
        rulesCoverage: Bool = false,
        connectionLimits: ConnectionLimits = ConnectionLimits(),
        tls: TLSFiles? = nil,
        metricsTopNamespaces: Int = 20,
        cluster: ClusterConfiguration? = nil,
        backup: BackupConfiguration? = nil,
        logger: Logger = Logger(label: "kindling")
    ) {
        self.backup = backup
        self.cluster = cluster
        self.tls = tls
        self.metricsTopNamespaces = metricsTopNamespaces
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.keepAliveTimeout = keepAliveTimeout
        self.corsOrigins = corsOrigins
        self.allowedHosts = allowedHosts
        self.maxConnections = maxConnections
        self.inFlightBudgetBytes = inFlightBudgetBytes
        self.pendingOutboundBudgetBytes = pendingOutboundBudgetBytes
        self.offLoopBytes = offLoopBytes
        self.maxNamespaces = maxNamespaces
        self.auth = auth ?? .unconfigured(onLoopback: ProtectedMode.isLoopback(host))
        self.rules = rules
        self.allowOpen = allowOpen
        self.rulesDebug = rulesDebug
        self.rulesCoverage = rulesCoverage
        self.connectionLimits = connectionLimits
        self.idleTimeout = idleTimeout
        self.host = host
        self.port = port
        self.storage = storage
        self.defaultNamespace = defaultNamespace
        self.maxPendingOutboundBytes = maxPendingOutboundBytes
        self.maxFrameBytes = maxFrameBytes
        self.maxMessageBytes = maxMessageBytes
        self.maxRESTBodyBytes = maxRESTBodyBytes
        self.eventStreamKeepAlive = eventStreamKeepAlive
        self.maxEventBytes = maxEventBytes
        self.eventLoopThreads = eventLoopThreads
        self.logger = logger
    }
}

extension ServerConfiguration {
    /// The rules a namespace without its own is under, and whether they are the open rules
    /// (then nothing is evaluated): the given rules; else open in emulator mode or with
    /// `allowOpen`; else locked, so only admins get in.
    public var defaultRules: (rules: RulesDocument, open: Bool) {
        if let rules { return (rules, false) }
        return auth.emulatorMode || allowOpen ? (.open, true) : (.locked, false)
    }

    /// The event loops `kindling serve` runs unless told: one per core but one, and at least one.
    /// Kindling works beside its loops too (a busy namespace's serial executor, each log's writes
    /// and syncs, snapshots); with a loop on every core those threads and the loops take turns on
    /// every core, and each hand-off between them costs a wake-up and cold caches. Measured on two
    /// cores (BENCHMARKS.md, round 10), one loop spends 10–40% less CPU per delivery and per write
    /// than two; pipelined writes lose 5–10% of their rate, since the loop is then their limit.
    public static func defaultEventLoopThreads(cores: Int) -> Int {
        max(1, cores - 1)
    }
}

/// Where and how a server keeps its data durable.
public struct StorageConfiguration: Sendable {
    /// The data directory: one folder per namespace.
    public var directory: String
    /// When a write counts as durable, and so may be acknowledged.
    public var fsync: FsyncMode
    /// Log bytes after which a namespace writes a snapshot and starts a new log.
    public var snapshotAfterBytes: Int
    /// The longest a namespace's log keeps writes before a snapshot folds them in (bounding
    /// start-up replay for slow writers too).
    public var snapshotInterval: Duration
    /// Cut a log at a damaged record instead of refusing to start (the writes after it are lost).
    public var repair: Bool
    /// How long a namespace's log file stays open without writes before it is closed (it is
    /// opened again at the next write), so idle namespaces hold no descriptors.
    public var logIdleTimeout: Duration
    /// How much of each namespace's past is kept for point-in-time restore; nil keeps none
    /// (what a snapshot makes redundant is deleted).
    public var history: HistoryPolicy?

    public init(
        directory: String,
        fsync: FsyncMode = .always,
        snapshotAfterBytes: Int = 64 * 1024 * 1024,
        snapshotInterval: Duration = .seconds(600),
        repair: Bool = false,
        logIdleTimeout: Duration = .seconds(60),
        history: HistoryPolicy? = .standard
    ) {
        self.history = history
        self.logIdleTimeout = logIdleTimeout
        self.directory = directory
        self.snapshotInterval = snapshotInterval
        self.fsync = fsync
        self.snapshotAfterBytes = snapshotAfterBytes
        self.repair = repair
    }
}
