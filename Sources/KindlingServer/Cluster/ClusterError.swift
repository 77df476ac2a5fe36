/// Why a server could not join its cluster.
public enum ClusterError: Error, CustomStringConvertible, Sendable {
    /// No NATS server of the list answered.
    case unreachable(urls: [String], detail: String)
    /// NATS answered, but the stream or buckets could not be created or opened.
    case setup(String)
    /// The configuration cannot run: a data directory with `--cluster`, an invalid node id.
    case invalid(String)
    /// `--require-fsync`, and the NATS servers do not (or cannot be seen to) fsync each write
    /// before acknowledging it.
    case notDurable(String)

    public var description: String {
        switch self {
        case .unreachable(let urls, let detail):
            return "cannot reach NATS at \(urls.joined(separator: ", ")): \(detail). Start the NATS servers (with JetStream) or fix --cluster."
        case .setup(let detail): return "cannot set up the cluster's streams and buckets in NATS JetStream: \(detail)"
        case .invalid(let detail): return detail
        case .notDurable(let detail):
            return
                "refusing to start (--require-fsync): \(detail). Run every NATS server with jetstream { sync_interval: always }, nats-server 2.11 or later, its monitoring port reachable (see docs/cluster.md)"
        }
    }
}
