import Logging
import NIOCore
import NIOHTTP1

/// Time limits for a plain HTTP connection, so that a client cannot hold one open by saying
/// nothing or too little: the request headers must arrive within the header timeout of the
/// connection opening, the body within the body timeout of the headers, and a kept-alive
/// connection's next request within the keep-alive timeout of the last response. While the
/// server answers (including an event stream, which may last for hours) none of these runs,
/// but a client that takes none of its answers for the keep-alive timeout (the connection stays
/// unwritable: it pipelines requests and never reads) is closed too. Removed with the other
/// HTTP handlers when the connection upgrades to a WebSocket.
final class HTTPTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let headerTimeout: TimeAmount
    private let bodyTimeout: TimeAmount
    private let keepAliveTimeout: TimeAmount
    private let idle: IdleConnections
    private let logger: Logger
    private var timer: Scheduled<Void>?
    /// Runs while the connection is unwritable.
    private var drainTimer: Scheduled<Void>?
    /// A request was read in full and its response has not ended yet.
    private var answering = false

    init(configuration: ServerConfiguration, idle: IdleConnections) {
        self.headerTimeout = TimeAmount(configuration.headerTimeout)
        self.bodyTimeout = TimeAmount(configuration.bodyTimeout)
        self.keepAliveTimeout = TimeAmount(configuration.keepAliveTimeout)
        self.idle = idle
        self.logger = configuration.logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { awaitRequest(context: context, within: headerTimeout, waiting: "request headers") }
    }

    func channelActive(context: ChannelHandlerContext) {
        awaitRequest(context: context, within: headerTimeout, waiting: "request headers")
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop(context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop(context: context)
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            drainTimer?.cancel()
            drainTimer = nil
        } else if drainTimer == nil {
            let limit = keepAliveTimeout
            drainTimer = context.eventLoop.assumeIsolated().scheduleTask(in: limit) {
                self.drainTimer = nil
                self.logger.info("closing an HTTP connection that took none of its answers for \(limit.nanoseconds / 1_000_000) ms")
                context.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            idle.remove(context.channel)
            arm(context: context, within: bodyTimeout, waiting: "the request body")
        case .body:
            break
        case .end:
            timer?.cancel()
            timer = nil
            answering = true
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), answering {
            answering = false
            awaitRequest(context: context, within: keepAliveTimeout, waiting: "another request on a kept-alive connection")
        }
        context.write(data, promise: promise)
    }

    private func awaitRequest(context: ChannelHandlerContext, within limit: TimeAmount, waiting: String) {
        idle.add(context.channel)
        arm(context: context, within: limit, waiting: waiting)
    }

    private func arm(context: ChannelHandlerContext, within limit: TimeAmount, waiting: String) {
        timer?.cancel()
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: limit) {
            self.timer = nil
            self.logger.debug("closing an HTTP connection: no \(waiting) within \(limit.nanoseconds / 1_000_000) ms")
            context.close(promise: nil)
        }
    }

    private func stop(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        drainTimer?.cancel()
        drainTimer = nil
        idle.remove(context.channel)
    }
}
