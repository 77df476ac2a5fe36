import Logging
import NIOCore
import NIOHTTP1

/// Applies the `BrowserAccessPolicy` to every plain HTTP request and WebSocket upgrade before
/// anything else sees it: a disallowed `Host` or `Origin` is answered 403 and the connection
/// closed. It also writes each response's CORS origin: the request's own `Origin` when allowed
/// (with `Vary: Origin`), or `*` when every origin is allowed. A response to a request without
/// `Origin` keeps the handler's `*`: no browser made it, and browsers send `Origin` on every
/// cross-origin request, so no page can read it.
final class BrowserGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let policy: BrowserAccessPolicy
    private let logger: Logger
    /// The allowed `Origin` of the request being answered.
    private var origin: String?
    /// A request was refused: the rest of it is dropped while the connection closes.
    private var refusing = false

    init(policy: BrowserAccessPolicy, logger: Logger) {
        self.policy = policy
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refusing else { return }
        guard case .head(let head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        let host = head.headers.first(name: "host")
        if let host, !policy.allows(host: host) {
            refuse(
                context: context,
                "Host \(String(host.prefix(100)).debugDescription) is not allowed; start the server with --allowed-host to accept it")
            return
        }
        let requestOrigin = head.headers.first(name: "origin")
        if let requestOrigin, !policy.allows(origin: requestOrigin, host: host) {
            refuse(
                context: context,
                "Origin \(String(requestOrigin.prefix(100)).debugDescription) is not allowed; start the server with --cors-origin to allow it")
            return
        }
        origin = requestOrigin
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !policy.allowsAnyOrigin, let origin, case .head(var head) = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        head.headers.replaceOrAdd(name: "Access-Control-Allow-Origin", value: origin)
        head.headers.add(name: "Vary", value: "Origin")
        context.write(wrapOutboundOut(.head(head)), promise: promise)
    }

    private func refuse(context: ChannelHandlerContext, _ message: String) {
        refusing = true
        logger.notice("refused a browser request: \(message)")
        HTTPErrorReply.sendAndClose(.forbidden, message, context: context)
    }
}
