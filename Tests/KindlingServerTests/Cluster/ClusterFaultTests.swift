import Testing

/// Cluster nodes and NATS servers killed, paused, shut down, hung or cut off from each other
/// under writes, and the NATS durability a node can require: what a node acknowledged is kept,
/// what it forwarded is answered once, and a stale leader is fenced. Serialized (one NATS
/// cluster of its own at a time) and run beside `ClusterNodeTests`, which shares its helpers
/// (`ClusterSuite`).
///
/// Its tests run in the order of their files' names. The first starts with the whole test run
/// starting beside it, when everything in this process runs several times slower for about a
/// minute: `+Durability` goes first because its tests bound no time of the cluster's (a
/// failover's or a lease's) and answer "try again" with a retry.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ClusterFaultTests: ClusterSuite {}
