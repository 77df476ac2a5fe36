/// What one Redis connection of a scenario does, on the connection's event loop (the Redis
/// counterpart of `RealtimeBehaviour`).
public protocol RedisBehaviour: AnyObject {
    /// The connection is open.
    func ready(_ connection: RedisConnection)

    /// One reply or pushed message.
    func received(_ value: RESPValue, on connection: RedisConnection)
}
