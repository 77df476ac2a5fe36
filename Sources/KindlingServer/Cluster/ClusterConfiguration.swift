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
    /// Refuse to start unless the NATS servers fsync each write before acknowledging it
    /// (`--require-fsync`): a quorum of the servers named in `urls` must answer on their
    /// monitoring port (`natsMonitorPort`, `/varz`) that they run JetStream with
    /// `sync_interval: always`, with a nats-server version Kindling does not warn about, and
    /// none of those answering may say otherwise. Off by default: the client protocol does not
    /// show these settings, and the monitoring port is often closed to applications; a node
    /// then says at start what an acknowledgement means.
    public var requireFsync: Bool
    /// The NATS servers' monitoring (HTTP) port, for `requireFsync`.
    public var natsMonitorPort: Int
    /// The clock a history's retention is measured by, in milliseconds since 1970: the wall
    /// clock, or a test's, so a test moves past the window without waiting for it.
    var historyClock: @Sendable () -> Int64 = { HistoryTime.now() }

    public init(
        urls: [String], nodeID: String = ClusterConfiguration.randomNodeID(), leaseTime: Duration = .seconds(5), snapshotAfterBytes: Int = 64 << 20,
        history: HistoryPolicy? = .standard, requireFsync: Bool = false, natsMonitorPort: Int = 8222
    ) {
        self.history = history
        self.urls = urls
        self.nodeID = nodeID
        self.leaseTime = leaseTime
        self.snapshotAfterBytes = snapshotAfterBytes
        self.requireFsync = requireFsync
        self.natsMonitorPort = natsMonitorPort
    }

    /// The NATS URLs in the order this node tries them: rotated by the node's index, so the
    /// nodes spread over the servers instead of all using the first one (whose partition from
    /// its peers would then stop every node's writes, and whose loss would cost every node a
    /// reconnect). The index is the number the node id ends with (`kindling-1`, `kindling-2`,
    /// … start at the first, second, … URL), or, for an id without one, a stable hash of it.
    public var connectionOrder: [String] {
        guard urls.count > 1 else { return urls }
        let offset = Int(Self.index(of: nodeID) % UInt64(urls.count))
        return Array(urls[offset...] + urls[..<offset])
    }

    /// A node's index for `connectionOrder`: its id's trailing number less one (at most nine
    /// digits), else the id's 64-bit FNV-1a hash.
    static func index(of nodeID: String) -> UInt64 {
        let digits = nodeID.utf8.reversed().prefix { $0 >= 0x30 && $0 <= 0x39 }
        if !digits.isEmpty, digits.count <= 9, let number = UInt64(String(decoding: digits.reversed(), as: UTF8.self)) {
            return number == 0 ? 0 : number - 1
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in nodeID.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return hash
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
