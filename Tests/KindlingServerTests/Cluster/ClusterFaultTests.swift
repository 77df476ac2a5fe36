import Testing

/// Leaders that hang, die or hand over while followers' forwarded writes are in flight, and a
/// log that two leaders would fork. Serialized: one NATS cluster at a time, beside the other
/// cluster suites.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ClusterFaultTests: ClusterSuite {}
