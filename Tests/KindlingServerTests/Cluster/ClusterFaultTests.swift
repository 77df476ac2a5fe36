import Testing

/// Cluster nodes and NATS servers killed, paused, shut down, hung or cut off from each other
/// under writes: what a node acknowledged is kept, what it forwarded is answered once, and a
/// stale leader is fenced. Serialized (one NATS cluster of its own at a time) and run beside
/// `ClusterNodeTests`, which shares its helpers (`ClusterSuite`).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ClusterFaultTests: ClusterSuite {}
