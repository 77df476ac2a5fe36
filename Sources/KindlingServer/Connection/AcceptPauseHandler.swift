#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NIOCore

/// On the listening channel: when accept fails for want of descriptors or memory (EMFILE,
/// ENFILE, ENOBUFS, ENOMEM), stops accepting for a moment instead of retrying at once. Without
/// it the listening socket stays readable (the connection waits in the backlog) and the event
/// loop calls accept tens of thousands of times a second. SwiftNIO's `AcceptBackoffHandler`
/// does not stop that: it delays the next `read`, but the failed one is still pending, so the
/// socket stays registered for readability. Turning `autoRead` off unregisters it.
final class AcceptPauseHandler: ChannelInboundHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel

    private let pause: TimeAmount
    private let logger: Logger
    private let notice = RateLimitedNotice(every: .seconds(10))
    private var paused = false

    init(pause: TimeAmount, logger: Logger) {
        self.pause = pause
        self.logger = logger
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? IOError, [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(error.errnoCode) else {
            context.fireErrorCaught(error)
            return
        }
        if notice.shouldLog() {
            logger.error("cannot accept connections (\(error)); pausing accepts for \(pause.nanoseconds / 1_000_000) ms at a time")
        }
        guard !paused else { return }
        paused = true
        context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        context.eventLoop.assumeIsolated().scheduleTask(in: pause) {
            self.paused = false
            context.channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
        }
    }
}
