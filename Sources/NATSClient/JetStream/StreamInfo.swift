/// What the server reports about a stream: its configuration, its state (message count and
/// sequence range) and, in a cluster, which server leads it.
public struct StreamInfo: Sendable, Hashable, Decodable {
    /// The configuration as the server applied it (with its defaults filled in).
    public var config: StreamConfig
    /// Counts and sequences.
    public var state: State
    /// The replica group, when clustered.
    public var cluster: Cluster?

    /// A stream's counts and sequence range.
    public struct State: Sendable, Hashable, Decodable {
        /// Messages stored.
        public var messages: UInt64
        /// Bytes stored.
        public var bytes: UInt64
        /// The first sequence still stored.
        public var firstSequence: UInt64
        /// The last sequence assigned.
        public var lastSequence: UInt64

        private enum CodingKeys: String, CodingKey {
            case messages, bytes
            case firstSequence = "first_seq"
            case lastSequence = "last_seq"
        }
    }

    /// The servers holding a stream and the one leading it.
    public struct Cluster: Sendable, Hashable, Decodable {
        /// The leader's server name.
        public var leader: String?
        /// The other replicas.
        public var replicas: [Replica]?
    }

    /// One follower of a stream.
    public struct Replica: Sendable, Hashable, Decodable {
        /// Its server name.
        public var name: String
        /// Whether it has caught up with the leader.
        public var current: Bool
    }
}
