/// The ephemeral push consumer an ordered consumer creates: no acks, one replica in memory (it is
/// cheap to lose, the reader recreates it), flow control and idle heartbeats so a stall or a lost
/// consumer is noticed, starting at the next sequence the reader needs.
struct OrderedConsumerConfig: Encodable {
    var deliverSubject: String
    var startSequence: UInt64
    var filterSubject: String?
    var heartbeat: Duration

    enum CodingKeys: String, CodingKey {
        case deliverSubject = "deliver_subject"
        case deliverPolicy = "deliver_policy"
        case startSequence = "opt_start_seq"
        case ackPolicy = "ack_policy"
        case replayPolicy = "replay_policy"
        case filterSubject = "filter_subject"
        case flowControl = "flow_control"
        case idleHeartbeat = "idle_heartbeat"
        case memoryStorage = "mem_storage"
        case replicas = "num_replicas"
        case inactiveThreshold = "inactive_threshold"
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(deliverSubject, forKey: .deliverSubject)
        try c.encode("by_start_sequence", forKey: .deliverPolicy)
        try c.encode(startSequence, forKey: .startSequence)
        try c.encode("none", forKey: .ackPolicy)
        try c.encode("instant", forKey: .replayPolicy)
        try c.encodeIfPresent(filterSubject, forKey: .filterSubject)
        try c.encode(true, forKey: .flowControl)
        try c.encode(heartbeat.nanoseconds, forKey: .idleHeartbeat)
        try c.encode(true, forKey: .memoryStorage)
        try c.encode(1, forKey: .replicas)
        try c.encode(max(heartbeat * 10, .seconds(5)).nanoseconds, forKey: .inactiveThreshold)
    }
}

/// The body of `$JS.API.CONSUMER.CREATE.<stream>`.
struct CreateConsumerRequest: Encodable {
    var streamName: String
    var config: OrderedConsumerConfig

    enum CodingKeys: String, CodingKey {
        case streamName = "stream_name"
        case config
    }
}

/// The part of the consumer info answer the ordered consumer uses.
struct ConsumerCreated: Decodable {
    var name: String
}
