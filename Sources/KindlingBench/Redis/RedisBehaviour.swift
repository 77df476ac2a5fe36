/// What one Redis connection of a scenario does, on the connection's event loop (the Redis
/// counterpart of `RealtimeBehaviour`).
public protocol RedisBehaviour: AnyObject {
    /// The connection is open.
    func ready(_ connection: RedisConnection)

    /// One reply or pushed message.
    func received(_ value: RESPValue, on connection: RedisConnection)

    /// The scenario's go signal, once every connection is open (see `RedisLink.start()`).
    func start(_ connection: RedisConnection)
}

extension RedisBehaviour {
    /// Most behaviours start on `ready`.
    public func start(_ connection: RedisConnection) {}
}
