import Testing

/// Cluster nodes taking over and recovering: a follower after a killed leader, a killed NATS
/// server, a partitioned leader fenced when its link returns, onDisconnect writes of dead
/// nodes, kills under load, and history and snapshots read back from JetStream. Serialized:
/// one NATS cluster at a time, beside the other cluster suites.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ClusterRecoveryTests: ClusterSuite {}
