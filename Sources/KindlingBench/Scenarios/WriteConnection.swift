import NIOCore

/// What the writers need of a connection whatever its wire (`RealtimeConnection`,
/// `RedisConnection`): its event loop for timers, and a batched flush.
protocol WriteConnection: AnyObject, SendableMetatype {
    /// The event loop the connection lives on.
    var eventLoop: any EventLoop { get }

    /// Sends everything queued.
    func flush()
}
