import Logging
import NIOCore
import Synchronization

/// On the listening channel: keeps the number of open connections under the limit, so the
/// process never runs out of descriptors for its own files. At the limit the connection idle
/// the longest (a plain HTTP one waiting for a request) is closed to make room; when none is
/// idle, the new connection is answered 503 (`OverLimitConnections`), or closed at once when as
/// many are being answered. Each is logged, at most once every ten seconds.
final class ConnectionLimitHandler: ChannelInboundHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel

    private let limit: Int
    private let open = Counter()
    private let idle: IdleConnections
    private let overLimit: OverLimitConnections
    private let logger: Logger
    private let notice = RateLimitedNotice(every: .seconds(10))

    init(limit: Int, idle: IdleConnections, overLimit: OverLimitConnections, logger: Logger) {
        self.limit = max(1, limit)
        self.idle = idle
        self.overLimit = overLimit
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let child = unwrapInboundIn(data)
        let count = open.value.add(1, ordering: .relaxed).newValue
        if count > limit {
            if idle.closeOldest() {
                if notice.shouldLog() { logger.notice("at the limit of \(limit) connections: closed the longest-idle one for a new client") }
            } else {
                open.value.subtract(1, ordering: .relaxed)
                if notice.shouldLog() { logger.warning("refusing connections: \(limit) connections are open (--max-connections)") }
                guard overLimit.admit(child) else {
                    child.close(promise: nil)
                    return
                }
                return context.fireChannelRead(data)
            }
        }
        let open = self.open
        child.closeFuture.whenComplete { _ in open.value.subtract(1, ordering: .relaxed) }
        context.fireChannelRead(data)
    }

    /// The connections open now, shared with their close callbacks.
    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }
}
