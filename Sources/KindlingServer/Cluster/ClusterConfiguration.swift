import Foundation

/// How a server joins a Kindling cluster on NATS JetStream (`kindling serve --cluster`).
///
/// In cluster mode the namespaces' committed writes live in a replicated JetStream stream, not
/// in a local data directory: a node keeps nothing on its own disk, and a node that restarts (or
/// a new one) recovers every namespace from the stream.
public struct ClusterConfiguration: Sendable {
    /// The NATS servers' URLs (`nats://host:port`); the client fails over between them.
    public var urls: [String]
    /// This node's name in leases and liveness keys: unique within the cluster. A node that
    /// restarts with the same id takes back the leases it still holds instead of waiting for
    /// them to expire.
    public var nodeID: String
    /// How long a namespace's lease outlives its holder: the leader renews it every third of
    /// this, and a dead leader's namespaces take no writes for up to this long.
    public var leaseTime: Duration
    /// Log bytes a namespace's leader publishes after which it writes a snapshot to the object
    /// store and purges the log behind the snapshot before it (`--snapshot-mb`).
    public var snapshotAfterBytes: Int
    /// How much of each namespace's past the cluster keeps (`--history`): snapshots kept in the
    /// object store and the log behind them left in the stream, so any instant in the window
    /// can be read or restored from any node; nil keeps none (the log is purged behind each
    /// snapshot).
    public var history: HistoryPolicy?

    public init(
        urls: [String], nodeID: String = ClusterConfiguration.randomNodeID(), leaseTime: Duration = .seconds(5), snapshotAfterBytes: Int = 64 << 20,
        history: HistoryPolicy? = .standard
    ) {
        self.history = history
        self.urls = urls
        self.nodeID = nodeID
        self.leaseTime = leaseTime
        self.snapshotAfterBytes = snapshotAfterBytes
    }

    /// A fresh node id: 12 random lowercase letters and digits, valid as a NATS subject token
    /// and a key-value key.
    public static func randomNodeID() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<12).map { _ in alphabet.randomElement() ?? "a" })
    }

    /// True for an id a key-value key and a subject token can carry: 1 to 64 letters, digits,
    /// `-` or `_`.
    public static func isValidNodeID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64
            && id.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x5F
            }
    }
}
