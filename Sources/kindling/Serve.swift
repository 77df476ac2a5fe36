import ArgumentParser
import Dispatch
import Foundation
import KindlingProtocol
import KindlingServer
import Logging

/// `kindling serve`: run the database server.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the Kindling server (realtime WebSocket at /.ws and HTTP on one port).",
        discussion: """
            Point a Firebase SDK at it with its emulator setting, for example
              JS:      connectDatabaseEmulator(db, "127.0.0.1", 9000)
              Admin:   FIREBASE_DATABASE_EMULATOR_HOST=127.0.0.1:9000
              iOS:     Database.database().useEmulator(withHost: "127.0.0.1", port: 9000)
              Swift:   try Database(url: "http://127.0.0.1:9000?ns=my-app")  (KindlingClient)

            Operating it (no credential needed for the first two):
              GET /.health   200 while the process serves.
              GET /.ready    200 while writes are taken; 503 with a reason while
                             the disk refuses writes or shutdown is under way.
              GET /.metrics  Prometheus text; from loopback or for an admin.
              SIGTERM        drain: /.ready 503, connections closed (their
                             onDisconnect writes run), logs synced, exit 0
                             within --drain-seconds.
            """
    )

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on.")
    var port = 9000

    @Option(name: .customLong("data-dir"), help: "Directory for durable data (one folder per namespace).")
    var dataDirectory = "./kindling-data"

    @Option(
        help: ArgumentHelp(
            "When a write is durable enough to acknowledge: always, everysec or never.",
            discussion:
                "always: after fdatasync of its batch (group commit); nothing acknowledged is lost. everysec: after the write to the OS, synced every second; a machine crash can lose up to a second. never: after the write to the OS; a machine crash can lose what the kernel had not written back. A crash of the process alone loses nothing acknowledged in any mode."
        ))
    var fsync = "always"

    @Option(name: .customLong("snapshot-mb"), help: "Log megabytes after which a namespace writes a snapshot and starts a new log.")
    var snapshotMegabytes = 64

    @Option(
        help: ArgumentHelp(
            "How long each namespace's past is kept for point-in-time restore: 90m, 24h, 7d, … or off.",
            discussion:
                "The log segments and snapshots a new snapshot makes redundant are kept (compressed) under <data-dir>/<namespace>/history (with --cluster: in JetStream, the log left in the stream and kept snapshots in the object store) instead of deleted, so `kindling restore --at` and `GET /<path>.json?at=` can rebuild any instant in the window. On by default for a day: a bad write found the next morning can still be undone. Keeping it costs disk only; writes and start-up do not read it."
        ))
    var history = "24h"

    @Option(name: .customLong("history-max-mb"), help: "Most megabytes of history one namespace keeps; past it the oldest goes first.")
    var historyMegabytes = 1024

    @Flag(
        name: .customLong("history-writers"),
        help: "Record who made each write (uid, admin or unauthenticated) in the history, for `kindling history`.")
    var historyWriters = false

    @Flag(help: "Cut a damaged log at the damage instead of refusing to start (the writes after it are lost).")
    var repair = false

    @Flag(name: .customLong("in-memory"), help: "Keep data in memory only (nothing written to disk).")
    var inMemory = false

    @Option(
        help: ArgumentHelp(
            "Run as a node of a cluster on NATS JetStream: the NATS servers' URLs, comma-separated (nats://a:4222,nats://b:4222).",
            discussion:
                "The namespaces' log is then a replicated JetStream stream and no data directory is used (--data-dir, --fsync and --in-memory do not apply). The start is refused when no NATS server answers."
        ))
    var cluster: String?

    @Option(name: .customLong("node-id"), help: "This node's id in the cluster (letters, digits, '-', '_'; default: a random one).")
    var nodeID: String?

    @Option(name: .customLong("lease-seconds"), help: "Seconds a namespace's leader lease outlives its holder (0.3 to 600).")
    var leaseSeconds = 5.0

    @Flag(
        name: .customLong("require-fsync"),
        help: ArgumentHelp(
            "Refuse to start unless the NATS servers fsync each write before acknowledging it.",
            discussion:
                "Asks each NATS server named in --cluster on its monitoring port (--nats-monitor-port, /varz): a majority must answer, and each one answering must run JetStream with sync_interval: always and nats-server 2.11 or later. Without it a node only says at start what an acknowledgement means."
        ))
    var requireFsync = false

    @Option(name: .customLong("nats-monitor-port"), help: "The NATS servers' monitoring port, for --require-fsync.")
    var natsMonitorPort = 8222

    @Option(help: "Namespace for requests that name none (no ?ns= and no database host label).")
    var namespace = "kindling"

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    @Option(
        name: .customLong("log-format"), help: "text, or json: one JSON object per line (time, level, label, message, metadata) for log shippers.")
    var logFormat = "text"

    @Option(
        name: .customLong("drain-seconds"),
        help: "Seconds a SIGTERM shutdown may take to close connections and sync the logs before it exits anyway (1 to 3600).")
    var drainSeconds = 10.0

    @Option(
        name: .customLong("metrics-top-namespaces"),
        help: "Namespaces, the largest, that get a kindling_namespace_tree_bytes series at /.metrics (0 to 1000).")
    var metricsTopNamespaces = 20

    @Option(name: .customLong("event-loops"), help: "Threads serving connections (1 to 256; default: one per core but one, at least one).")
    var eventLoops: Int?

    @Option(help: "Bytes a connection may have waiting to be sent before it is disconnected as too slow.")
    var maxPendingBytes = 64 * 1024 * 1024

    @Option(name: .customLong("keep-alive"), help: "Seconds between keep-alive events on REST event streams.")
    var keepAliveSeconds = 10.0

    @Option(name: .customLong("max-namespaces"), help: "Most namespaces the server holds; a write creating one more is refused (507).")
    var maxNamespaces = 10_000

    @OptionGroup(title: "Security")
    var security: SecurityOptions
    @OptionGroup(title: "TLS")
    var tls: TLSOptions
    @OptionGroup(title: "Backups")
    var backups: BackupOptions
    // Limits on what one client may hold, and who may connect from a browser.
    @Option(name: .customLong("header-timeout"), help: "Seconds an HTTP connection may take to send a request's headers.")
    var headerTimeoutSeconds = 20.0
    @Option(name: .customLong("body-timeout"), help: "Seconds a request body may take to arrive in full.")
    var bodyTimeoutSeconds = 60.0
    @Option(name: .customLong("idle-timeout"), help: "Seconds a kept-alive HTTP connection may wait for its next request.")
    var keepAliveTimeoutSeconds = 60.0
    @Option(name: .customLong("max-connections"), help: "Most connections open at once (default: the descriptor limit less a reserve).")
    var maxConnections: Int?
    @Option(name: .customLong("cors-origin"), help: "A browser origin allowed besides loopback ones (repeatable; '*' allows any).")
    var corsOrigins: [String] = []
    @Option(
        name: .customLong("allowed-host"),
        help: "A Host name accepted besides localhost names while listening on loopback (repeatable; '*' accepts any).")
    var allowedHosts: [String] = []
    @Option(
        name: .customLong("max-unfinished-mb"),
        help:
            "Megabytes of requests in progress the server holds at once: bodies and messages partly received, their parsing, and answers to realtime reads not yet handed to their connections."
    )
    var maxUnfinishedMegabytes = 1024
    @Option(
        name: .customLong("max-backlog-mb"),
        help: "Megabytes waiting for slow realtime readers the server holds at once; past it the reader falling behind is disconnected.")
    var maxBacklogMegabytes = 1024
    @Option(name: .customLong("max-listens"), help: "Listens one realtime connection may hold at once.")
    var maxListens = ConnectionLimits().maxListens
    @Option(name: .customLong("max-ondisconnect"), help: "onDisconnect operations one realtime connection may queue.")
    var maxOnDisconnect = ConnectionLimits().maxOnDisconnectOperations
    @Option(name: .customLong("max-ondisconnect-mb"), help: "Megabytes of onDisconnect data one realtime connection may queue.")
    var maxOnDisconnectMegabytes = ConnectionLimits().maxOnDisconnectBytes / (1024 * 1024)

    /// The history `--history` and `--history-max-mb` ask for; nil for `off`. A kept snapshot
    /// every twenty-fourth of the window (at most an hour apart) bounds what a restore replays.
    func historyPolicy() throws -> HistoryPolicy? {
        guard history != "off", history != "0" else { return nil }
        guard let retention = DurationText.parse(history), retention >= .seconds(60) else {
            throw ValidationError("--history must be off or a duration of a minute or more, such as 90m, 24h or 7d.")
        }
        guard historyMegabytes >= 1, historyMegabytes <= 1 << 30 else { throw ValidationError("--history-max-mb must be between 1 and \(1 << 30).") }
        return HistoryPolicy(
            retention: retention, maxBytes: historyMegabytes << 20, snapshotSpacing: min(.seconds(3600), retention / 24),
            recordsWriters: historyWriters
        )
    }

    func validate() throws {
        _ = try historyPolicy()
        for (name, value, limit) in [
            ("--max-listens", maxListens, 10_000_000), ("--max-ondisconnect", maxOnDisconnect, 10_000_000),
            ("--max-ondisconnect-mb", maxOnDisconnectMegabytes, 1 << 20),
        ] {
            guard value >= 1, value <= limit else { throw ValidationError("\(name) must be between 1 and \(limit).") }
        }
        for (name, seconds) in [
            ("--header-timeout", headerTimeoutSeconds), ("--body-timeout", bodyTimeoutSeconds), ("--idle-timeout", keepAliveTimeoutSeconds),
        ] {
            guard seconds >= 0.01, seconds <= 86_400 else { throw ValidationError("\(name) must be between 0.01 and 86400 seconds.") }
        }
        if let maxConnections {
            guard maxConnections >= 1, maxConnections <= 10_000_000 else {
                throw ValidationError("--max-connections must be between 1 and 10000000.")
            }
        }
        guard maxUnfinishedMegabytes >= 1, maxUnfinishedMegabytes <= 1 << 30 else {
            throw ValidationError("--max-unfinished-mb must be between 1 and 1073741824.")
        }
        guard maxBacklogMegabytes >= 1, maxBacklogMegabytes <= 1 << 30 else {
            throw ValidationError("--max-backlog-mb must be between 1 and 1073741824.")
        }
        guard FsyncMode(rawValue: fsync) != nil else { throw ValidationError("--fsync must be always, everysec or never.") }
        // Both become byte counts by multiplication or buffer limits: bounded so neither overflows.
        guard snapshotMegabytes >= 1, snapshotMegabytes <= 1 << 20 else { throw ValidationError("--snapshot-mb must be between 1 and 1048576.") }
        guard maxPendingBytes >= 1024, maxPendingBytes <= 1 << 40 else {
            throw ValidationError("--max-pending-bytes must be between 1024 and 1099511627776.")
        }
        guard keepAliveSeconds >= 0.01, keepAliveSeconds <= 3600 else {
            throw ValidationError("--keep-alive must be between 0.01 and 3600 seconds.")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("Unknown log level \"\(logLevel)\"; use trace, debug, info, notice, warning, error or critical.")
        }
        guard (0...65535).contains(port) else { throw ValidationError("Port \(port) is out of range.") }
        guard NamespaceName.isValid(namespace) else { throw ValidationError("--namespace: \(NamespaceName.rule).") }
        guard maxNamespaces >= 1 else { throw ValidationError("--max-namespaces must be at least 1.") }
        guard logFormat == "text" || logFormat == "json" else { throw ValidationError("--log-format must be text or json.") }
        guard drainSeconds >= 1, drainSeconds <= 3600 else { throw ValidationError("--drain-seconds must be between 1 and 3600.") }
        guard (0...1000).contains(metricsTopNamespaces) else { throw ValidationError("--metrics-top-namespaces must be between 0 and 1000.") }
        if let eventLoops, !(1...256).contains(eventLoops) { throw ValidationError("--event-loops must be between 1 and 256.") }
        guard leaseSeconds >= 0.3, leaseSeconds <= 600 else { throw ValidationError("--lease-seconds must be between 0.3 and 600.") }
        if let nodeID, !ClusterConfiguration.isValidNodeID(nodeID) { throw ValidationError("--node-id must be 1 to 64 letters, digits, '-' or '_'.") }
        if cluster != nil, clusterURLs.isEmpty { throw ValidationError("--cluster needs at least one nats:// URL.") }
        guard (1...65535).contains(natsMonitorPort) else { throw ValidationError("--nats-monitor-port must be between 1 and 65535.") }
        if requireFsync, cluster == nil { throw ValidationError("--require-fsync applies to --cluster only.") }
        if cluster != nil, backups.directory != nil { throw ValidationError("--backup-dir is not available with --cluster yet.") }
    }

    /// The NATS URLs of `--cluster`.
    var clusterURLs: [String] {
        (cluster ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The cluster settings, or nil without `--cluster`.
    var clusterConfiguration: ClusterConfiguration? {
        guard cluster != nil else { return nil }
        return ClusterConfiguration(
            urls: clusterURLs, nodeID: nodeID ?? ClusterConfiguration.randomNodeID(), leaseTime: .milliseconds(Int64(leaseSeconds * 1000)),
            snapshotAfterBytes: snapshotMegabytes * 1024 * 1024, history: try? historyPolicy(), requireFsync: requireFsync,
            natsMonitorPort: natsMonitorPort)
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let json = logFormat == "json"
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler = json ? JSONLogHandler(label: label) : StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "kindling")
        let auth = try security.authSettings(host: host)
        let rules = try security.loadRules()
        let rulesText = try security.rules.map(SecurityOptions.read)
        let server: KindlingServer
        do {
            server = try await KindlingServer.start(
                ServerConfiguration(
                    host: host,
                    port: port,
                    storage: inMemory || cluster != nil
                        ? nil
                        : StorageConfiguration(
                            directory: dataDirectory,
                            fsync: FsyncMode(rawValue: fsync) ?? .always,
                            snapshotAfterBytes: snapshotMegabytes * 1024 * 1024,
                            repair: repair,
                            history: try historyPolicy()
                        ),
                    defaultNamespace: namespace,
                    maxPendingOutboundBytes: maxPendingBytes,
                    eventStreamKeepAlive: .milliseconds(Int64(keepAliveSeconds * 1000)),
                    eventLoopThreads: eventLoops ?? ServerConfiguration.defaultEventLoopThreads(cores: ProcessInfo.processInfo.activeProcessorCount),
                    headerTimeout: .milliseconds(Int64(headerTimeoutSeconds * 1000)),
                    bodyTimeout: .milliseconds(Int64(bodyTimeoutSeconds * 1000)),
                    keepAliveTimeout: .milliseconds(Int64(keepAliveTimeoutSeconds * 1000)),
                    corsOrigins: corsOrigins,
                    allowedHosts: allowedHosts,
                    maxConnections: maxConnections,
                    inFlightBudgetBytes: maxUnfinishedMegabytes * 1024 * 1024,
                    pendingOutboundBudgetBytes: maxBacklogMegabytes * 1024 * 1024,
                    maxNamespaces: maxNamespaces,
                    auth: auth,
                    rules: rules,
                    allowOpen: security.allowOpen,
                    rulesDebug: security.rulesDebug,
                    rulesCoverage: security.recordsCoverage(auth),
                    connectionLimits: ConnectionLimits(
                        maxListens: maxListens, maxOnDisconnectOperations: maxOnDisconnect,
                        maxOnDisconnectBytes: maxOnDisconnectMegabytes * 1024 * 1024
                    ),
                    tls: tls.files,
                    metricsTopNamespaces: metricsTopNamespaces,
                    cluster: clusterConfiguration,
                    backup: backups.configuration,
                    logger: logger
                ))
        } catch let refusal as ProtectedMode.Refusal {
            throw ValidationError(refusal.description)
        } catch let error as AuthSettingsError {
            throw ValidationError("Credential settings: \(error)")
        } catch let error as TLSFileError {
            throw ValidationError("TLS: \(error)")
        } catch let error as ClusterError {
            throw ValidationError("Cluster: \(error)")
        } catch let error as BackupError {
            throw ValidationError("Backups: \(error)")
        }
        // Before the banner, so a supervisor that signals once it reads the banner is heard.
        let watcher = security.rules.map { RulesFileWatcher(path: $0, server: server, logger: logger, loadedText: rulesText) }
        let hangup = HangupSignal.install(server: server, rules: watcher, logger: logger)
        defer { hangup.cancel() }
        let clusterLine = server.configuration.cluster.map { "node \($0.nodeID) on \($0.urls.joined(separator: ","))" }
        let banner = ServeBanner(
            host: host,
            port: server.port,
            scheme: tls.files == nil ? "http" : "https",
            namespace: namespace,
            dataDirectory: inMemory || cluster != nil ? nil : ServeBanner.absolute(dataDirectory),
            fsync: fsync,
            security: Serve.securitySummary(
                auth: auth, rulesFile: security.rules, allowOpen: security.allowOpen, coverage: security.recordsCoverage(auth)),
            cluster: clusterLine
        )
        print(banner.text)
        // Scripts and supervisors read this banner through a pipe: send it now, not at exit.
        FileHandle.standardOutput.synchronizeFile()
        fflush(nil)
        if security.rules == nil, auth.emulatorMode || security.allowOpen {
            logger.warning("no security rules: every request is allowed until rules are set (--rules FILE or PUT /.settings/rules.json)")
        } else if security.rules == nil {
            logger.warning("no security rules: only admin credentials have access until rules are set (--rules FILE or PUT /.settings/rules.json)")
        }
        if security.allowOpen, !ProtectedMode.isLoopback(host) {
            logger.warning("--allow-open: serving \(host), which other machines can reach, without the protection it would otherwise require")
        }
        // A text is parsed beside itself and its copy, and each value costs about 128 bytes more:
        // a write of the hosted service's 256 MB needs about 1024 MB.
        if maxUnfinishedMegabytes < 1024 {
            logger.warning(
                "--max-unfinished-mb \(maxUnfinishedMegabytes): writes over about \(maxUnfinishedMegabytes / 4) MB may be refused as too large (the body limit is 256 MB; the default 1024 takes one that size)"
            )
        }
        if auth.emulatorMode {
            logger.notice("emulator mode: `owner` is an admin and unsigned tokens are accepted (loopback, no key or secret configured)")
        }
        watcher?.start()
        defer { watcher?.stop() }
        // A file-size limit then fails the write, which storage handles like a full disk
        // (writes refused until it passes), instead of killing the process.
        signal(SIGXFSZ, SIG_IGN)
        let snapshotRequests = Serve.snapshotOnSignal(server: server, logger: logger)
        defer { snapshotRequests.cancel() }
        await Serve.waitForTermination()
        logger.notice("shutting down: closing connections and syncing the logs", metadata: ["drain-seconds": "\(drainSeconds)"])
        if try await server.shutdown(within: .milliseconds(Int64(drainSeconds * 1000))) {
            logger.notice("shut down")
        } else {
            logger.error("the logs and snapshots were not all on disk within --drain-seconds (a slow disk?); exiting anyway")
        }
    }

    /// The lines on what protects the server, and whether it records rules coverage, for the
    /// start-up banner.
    static func securitySummary(auth: AuthSettings, rulesFile: String?, allowOpen: Bool, coverage: Bool) -> String {
        let rules =
            rulesFile.map { "Rules: \($0) (reloaded on change and SIGHUP)" }
            ?? (auth.emulatorMode || allowOpen
                ? "Rules: none, so every request is allowed until rules are set" : "Rules: none, so only admins have access until rules are set")
        let tokens =
            auth.emulatorMode ? "Emulator mode: `owner` is an admin, unsigned tokens are accepted" : "Tokens: verified (signature, exp, nbf, iat)"
        let recorded = coverage ? "\nRules coverage: recorded, at /.inspect/coverage?ns=NAME (kindling rules coverage)" : ""
        return rules + "\n" + tokens + recorded
    }

    /// Snapshots every namespace with new writes when SIGUSR1 arrives (`kindling snapshot`).
    static func snapshotOnSignal(server: KindlingServer, logger: Logger) -> any DispatchSourceSignal {
        signal(SIGUSR1, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: .global())
        source.setEventHandler {
            let started = server.snapshot()
            if started.isEmpty {
                logger.notice("snapshot requested: every namespace's snapshot already covers all its writes")
            } else {
                logger.notice("snapshot requested: writing snapshots", metadata: ["namespaces": "\(started.joined(separator: ", "))"])
            }
        }
        source.resume()
        return source
    }

    /// Returns when SIGINT or SIGTERM arrives.
    static func waitForTermination() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let fired = Fired()
            for signalNumber in [SIGINT, SIGTERM] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
                source.setEventHandler {
                    if fired.fire() { continuation.resume() }
                }
                source.resume()
                fired.keep(source)
            }
        }
    }
}

/// Resumes the signal wait once, and keeps the signal sources alive.
private final class Fired: @unchecked Sendable {
    private var done = false
    private var sources: [any DispatchSourceSignal] = []
    private let lock = NSLock()

    func keep(_ source: any DispatchSourceSignal) { lock.withLock { sources.append(source) } }

    func fire() -> Bool {
        lock.withLock {
            defer { done = true }
            return !done
        }
    }
}
