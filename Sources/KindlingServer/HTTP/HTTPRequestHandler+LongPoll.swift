import KindlingCore
import KindlingProtocol
import Logging
import NIOCore
import NIOHTTP1

/// The long-polling transport at `/.lp` (the JS SDK's fallback in browsers; see
/// `LongPollSessionState`). Its answers are scripts the SDK loads with `<script>` tags, so the
/// page that asks is known only by `Referer` or `Sec-Fetch-Site`: the same browser policy as
/// JSONP decides (`BrowserAccessPolicy.allowsScript`), so another site's page cannot open a
/// session to a developer's loopback server.
extension HTTPRequestHandler {
    func longPoll(_ head: HTTPRequestHead, target: RequestTarget, keepAlive: Bool, context: ChannelHandlerContext) {
        let refuse = { (status: HTTPResponseStatus, message: String) in
            // A script the SDK loads: an error status makes it give the connection up and retry.
            // The messages are the server's own, none holding `*/`.
            self.sendScript(Array("/* \(message) */".utf8), status: status, keepAlive: keepAlive, context: context)
        }
        guard head.method == .GET else { return refuse(.methodNotAllowed, "Use GET") }
        let host = head.headers.first(name: "host")
        guard
            resources.policy.allowsScript(
                fetchSite: head.headers.first(name: "sec-fetch-site"), referer: head.headers.first(name: "referer"), host: host)
        else {
            configuration.logger.notice("refused a long-polling request from a page the browser policy does not allow")
            return refuse(.forbidden, "Long-polling is not allowed from this page; start the server with --cors-origin to allow its origin")
        }
        let request: LongPollRequest
        do throws(LongPollRequestError) {
            request = try LongPollRequest(parameters: target.parameters)
        } catch {
            return refuse(.badRequest, error.message)
        }
        switch request {
        case .start(let callback, let lastSession):
            let name = RequestTarget.namespace(parameters: target.parameters, host: host, fallback: configuration.defaultNamespace)
            guard NamespaceName.isValid(name) else { return refuse(.badRequest, "Invalid namespace: \(NamespaceName.rule)") }
            guard resources.longPolls.count < resources.longPolls.limit else {
                return refuse(.serviceUnavailable, "Too many long-polling sessions; retry later")
            }
            let connection = LongPollConnection(
                namespace: registry.namespace(name), callback: callback, eventLoop: context.eventLoop,
                shares: resources.perEventLoop.shares(of: context.eventLoop), registry: resources.longPolls, resources: resources,
                configuration: configuration
            )
            let session = LongPollSession(connection, eventLoop: context.eventLoop)
            guard resources.longPolls.add(session) else {
                connection.discard()
                registry.released(connection.namespace)
                return refuse(.serviceUnavailable, "Too many long-polling sessions; retry later")
            }
            let handshakeHost = host ?? "\(configuration.host):\(context.channel.localAddress?.port ?? configuration.port)"
            let script = connection.start(host: handshakeHost, replacing: lastSession.flatMap(SessionID.init), remote: context.channel.remoteAddress)
            sendScript(script, status: .ok, keepAlive: keepAlive, context: context)
        case .poll(let id, let password, let segments):
            guard let session = resources.longPolls.session(id), session.accepts(password: password) else {
                // The SDK closes its connection on a failed script and starts a new session.
                return refuse(.notFound, "No long-polling session with this id and password")
            }
            let ticket = resources.longPolls.nextTicket()
            state = .polling(session, ticket: ticket)
            let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
            let boundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
            session.poll(
                ticket, segments: segments,
                responder: LongPollResponder(eventLoop: context.eventLoop) { script in
                    let handler = handler.value
                    guard case .polling(_, let held) = handler.state, held == ticket else { return }
                    handler.state = .idle
                    handler.sendScript(script, status: .ok, keepAlive: keepAlive, context: boundContext.value)
                })
        case .disconnectFrame(let id, let password):
            guard let session = resources.longPolls.session(id), session.accepts(password: password) else {
                return refuse(.notFound, "No long-polling session with this id and password")
            }
            guard session.takeDisconnectFrame() else { return refuse(.conflict, "This long-polling session has its disconnect frame already") }
            // Held open, never ended: the page's unloading closes it, which ends the session;
            // the session's end closes it in turn.
            state = .disconnectFrame(session)
            let boundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
            session.ended.hop(to: context.eventLoop).whenComplete { _ in boundContext.value.close(promise: nil) }
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "text/html; charset=utf-8")
            headers.add(name: "Cache-Control", value: "no-store")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "<html><body></body></html>")))), promise: nil)
        }
    }

    /// Answers with a script (an empty one says nothing, and the SDK sends its next poll).
    func sendScript(_ script: [UInt8], status: HTTPResponseStatus, keepAlive: Bool, context: ChannelHandlerContext) {
        var response = HTTPResponse(
            status, body: script,
            headers: [
                ("Content-Type", "application/javascript; charset=utf-8"), ("X-Content-Type-Options", "nosniff"), ("Cache-Control", "no-store"),
            ]
        )
        if status == .serviceUnavailable { response.headers.append(("Retry-After", "1")) }
        send(response, keepAlive: keepAlive, context: context)
    }
}
