import KindlingCore
import Metrics
import Prometheus
import Synchronization

/// The server's metrics, in the Prometheus text format at `GET /.metrics`.
///
/// Made through swift-metrics with a factory bound to this server's own
/// `PrometheusCollectorRegistry`, not through the global `MetricsSystem`: the global can be
/// bootstrapped once per process, and the tests run many servers in one process, each of which
/// must count only its own traffic. (An application embedding Kindling keeps its own
/// `MetricsSystem` choice too.)
///
/// Everything on a hot path is an atomic addition, made once per batch where a batch is at
/// hand: a namespace reports the requests, writes and deliveries of a whole block of work at
/// once; the log times each flush, not each record.
final class ServerMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let open: [Meter]
    private let opened: [CoreMetrics.Counter]
    /// `[action][outcome]`.
    private let requests: [[CoreMetrics.Counter]]
    let listensActive: Meter
    let writesCommitted: CoreMetrics.Counter
    let fanoutDeliveries: CoreMetrics.Counter
    let fanoutBytes: CoreMetrics.Counter
    let slowReadersDisconnected: CoreMetrics.Counter
    let logAppend: Timer
    let logFsync: Timer
    let snapshotDuration: Timer
    let snapshotBytes: Meter
    let namespaces: Meter
    /// Namespace logs whose writes are failing now (a full disk): readiness is refused while
    /// any is. Also exported, as `kindling_storage_failing_logs`.
    private let failingLogCount = Atomic<Int>(0)
    private let failingLogs: Meter
    /// The per-namespace tree sizes, for the largest namespaces only.
    let treeSizes: NamespaceSizeGauges
    /// `kindling_unfinished_bytes` and `kindling_backlog_bytes`: what the server-wide budgets
    /// hold (`--max-unfinished-mb`: bodies being read or parsed, answers their connections have
    /// not taken; the bytes waiting for realtime readers that fell behind), read at each scrape.
    private let unfinishedBytes: Meter
    private let backlogBytes: Meter
    /// Cluster mode: the round trip of each batch's JetStream publish (a replicated write's
    /// wait, where one server waits for its fsync).
    let clusterPublish: Timer
    /// Cluster mode: 1 while the node's NATS connection is up, else 0.
    let clusterConnected: Meter
    /// Cluster mode: the namespaces this node leads now.
    private let ledCount = Atomic<Int>(0)
    private let led: Meter
    /// Cluster mode: breaks in a namespace's log this node found (`LogBreak`), by kind.
    private let logBreakCounts: [CoreMetrics.Counter]

    /// - Parameter topNamespaces: how many of the largest namespaces get a
    ///   `kindling_namespace_tree_bytes` series.
    init(topNamespaces: Int) {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        let fast: [Duration] = [
            .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .microseconds(2500),
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .seconds(1),
        ]
        factory.durationHistogramBuckets = [
            "kindling_log_append_seconds": fast,
            "kindling_log_fsync_seconds": fast,
            "kindling_cluster_publish_seconds": fast,
            "kindling_snapshot_seconds": [
                .milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(500), .seconds(1), .seconds(5), .seconds(10),
                .seconds(30), .seconds(60), .seconds(300),
            ],
        ]
        self.registry = registry
        self.factory = factory
        open = ConnectionTransport.allCases.map {
            Meter(label: "kindling_connections_open", dimensions: [("transport", $0.rawValue)], factory: factory)
        }
        opened = ConnectionTransport.allCases.map {
            CoreMetrics.Counter(label: "kindling_connections_opened_total", dimensions: [("transport", $0.rawValue)], factory: factory)
        }
        requests = RequestAction.allCases.map { action in
            RequestOutcome.allCases.map { outcome in
                CoreMetrics.Counter(
                    label: "kindling_requests_total", dimensions: [("action", action.label), ("outcome", outcome.label)], factory: factory)
            }
        }
        listensActive = Meter(label: "kindling_listens_active", factory: factory)
        writesCommitted = CoreMetrics.Counter(label: "kindling_writes_committed_total", factory: factory)
        fanoutDeliveries = CoreMetrics.Counter(label: "kindling_fanout_deliveries_total", factory: factory)
        fanoutBytes = CoreMetrics.Counter(label: "kindling_fanout_bytes_total", factory: factory)
        slowReadersDisconnected = CoreMetrics.Counter(label: "kindling_slow_readers_disconnected_total", factory: factory)
        logAppend = Timer(label: "kindling_log_append_seconds", factory: factory)
        logFsync = Timer(label: "kindling_log_fsync_seconds", factory: factory)
        snapshotDuration = Timer(label: "kindling_snapshot_seconds", factory: factory)
        snapshotBytes = Meter(label: "kindling_snapshot_bytes", factory: factory)
        namespaces = Meter(label: "kindling_namespaces", factory: factory)
        failingLogs = Meter(label: "kindling_storage_failing_logs", factory: factory)
        treeSizes = NamespaceSizeGauges(limit: topNamespaces, factory: factory)
        unfinishedBytes = Meter(label: "kindling_unfinished_bytes", factory: factory)
        backlogBytes = Meter(label: "kindling_backlog_bytes", factory: factory)
        clusterPublish = Timer(label: "kindling_cluster_publish_seconds", factory: factory)
        clusterConnected = Meter(label: "kindling_cluster_nats_connected", factory: factory)
        led = Meter(label: "kindling_cluster_namespaces_led", factory: factory)
        logBreakCounts = LogBreak.allCases.map {
            CoreMetrics.Counter(label: "kindling_cluster_log_breaks_total", dimensions: [("kind", $0.rawValue)], factory: factory)
        }
        // Prometheus's convention for what a process is: always 1, the facts in its labels.
        // The registry keeps it.
        Meter(label: "kindling_build_info", dimensions: [("version", KindlingVersion.current)], factory: factory).set(1)
    }

    /// A break in a namespace's log was found: a batch missing from what this node read, or a
    /// batch that forks the log.
    func logBreaks(_ kind: LogBreak) {
        logBreakCounts[LogBreak.allCases.firstIndex(of: kind) ?? 0].increment()
    }

    /// A namespace started (or stopped) being led by this node.
    func leading(_ starts: Bool) {
        led.set(ledCount.add(starts ? 1 : -1, ordering: .relaxed).newValue)
    }

    func connectionOpened(_ transport: ConnectionTransport) {
        let index = ConnectionTransport.allCases.firstIndex(of: transport) ?? 0
        opened[index].increment()
        open[index].increment()
    }

    func connectionClosed(_ transport: ConnectionTransport) {
        open[ConnectionTransport.allCases.firstIndex(of: transport) ?? 0].decrement()
    }

    /// A reader that fell too far behind was cut off.
    func slowReaderDisconnected() { slowReadersDisconnected.increment() }

    /// Adds a namespace's tally of decided requests.
    func add(_ tally: inout RequestTally) {
        for (action, outcome, count) in tally.take() { requests[action.rawValue][outcome.rawValue].increment(by: count) }
    }

    /// A REST request refused before it reached a namespace (a request that does not parse, a
    /// credential that does not verify, a method the API lacks): an `error` of its action.
    func restRefusedEarly(write: Bool) {
        requests[(write ? RequestAction.restWrite : .restRead).rawValue][RequestOutcome.error.rawValue].increment()
    }

    /// A namespace's log started or stopped failing.
    func logFailing(_ failing: Bool) {
        let now = failingLogCount.add(failing ? 1 : -1, ordering: .relaxed).newValue
        failingLogs.set(now)
    }

    /// Nil while storage takes writes, else why it does not.
    var storageRefusal: String? {
        let failing = failingLogCount.load(ordering: .relaxed)
        return failing > 0 ? "writes to storage are failing in \(failing) namespace(s) (is the disk full?)" : nil
    }

    /// Every series, in the Prometheus text exposition format.
    /// The metrics in Prometheus's text format, the budgets' gauges read now.
    func render(budget: InFlightBudget, backlog: InFlightBudget) -> [UInt8] {
        unfinishedBytes.set(budget.inUse)
        backlogBytes.set(backlog.inUse)
        return registry.emitToBuffer()
    }
}
