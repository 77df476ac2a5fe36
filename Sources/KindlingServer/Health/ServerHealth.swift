import Synchronization

/// Whether the server should be sent traffic (`GET /.ready`): it is ready once it serves (the
/// port is bound only after every namespace was recovered), and not ready while any
/// namespace's log refuses writes (a full disk, retried every second), while a cluster node has
/// lost its NATS connection, or once shutdown began. `GET /.health` only says the process still
/// answers.
final class ServerHealth: Sendable {
    private let draining = Atomic<Bool>(false)
    private let metrics: ServerMetrics
    private let cluster: ClusterNode?

    init(metrics: ServerMetrics, cluster: ClusterNode? = nil) {
        self.metrics = metrics
        self.cluster = cluster
    }

    /// Shutdown began: readiness is refused from now on, so a load balancer stops sending
    /// requests while the connections drain.
    func startDraining() { draining.store(true, ordering: .relaxed) }

    /// Nil when ready, else why not.
    var notReadyReason: String? {
        if draining.load(ordering: .relaxed) { return "shutting down" }
        if let cluster, !cluster.isConnected { return "not connected to NATS" }
        return metrics.storageRefusal
    }
}
