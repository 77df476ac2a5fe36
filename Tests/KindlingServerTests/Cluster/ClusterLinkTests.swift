import Testing

/// The links around a cluster node: a node cut off from NATS, its NATS server stalled or cut off
/// from its peers, the node's NATS connection lost, and writes a follower forwarded through a
/// leader shut down, killed or paused, answered once. Serialized (one NATS cluster of its own at
/// a time) and run beside `ClusterFaultTests` and `ClusterNodeTests`, with the helpers they share
/// (`ClusterSuite`): the three take about as long, where one suite made the test run's longest
/// chain.
///
/// Like every serialized suite, its first test (files run in the order of their names) starts
/// while the whole test run starts beside it, several times slower for about a minute:
/// `+Health`'s bounds (10 s for a node to see NATS gone) are far above what it needs there.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ClusterLinkTests: ClusterSuite {}
