import KindlingCore
import KindlingProtocol
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

/// Plain HTTP requests on the server's port (everything but the WebSocket upgrade at `/.ws`):
/// the REST API at `/<path>.json`, event streams, CORS preflight, `/.inspect/databases.json`
/// and the web console's files at `/.console`.
///
/// Bodies are gathered up to the REST size limit; a larger one is refused with 413 as soon as
/// its size is known, and the rest of it is read and dropped, never buffered, before the
/// connection closes (as `HTTPBodyBudgetHandler` does, for the same reason). The namespace
/// answers asynchronously; NIO's pipelining handler holds the connection's next request until
/// this response has ended, so answers keep request order. Each response goes out in one flush
/// with `Content-Length` (and TCP_NODELAY on the socket), so no response waits on Nagle.
final class HTTPRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    enum State {
        case idle
        case receiving(HTTPRequestHead, ByteBuffer)
        /// The body was refused over the size limit; its remaining parts are dropped, and the
        /// connection closes once they have ended and the refusal is out (`answered`).
        case discarding(answered: EventLoopFuture<Void>)
        case streaming(EventStream, Namespace)
        /// A profiler stream (`/.settings/profile.json`).
        case profiling(ProfileStream, Namespace)
        /// A long-polling request held open until its session has something to say.
        case polling(LongPollSession, ticket: Int)
        /// A long-polling session's disconnect frame, open until the page unloads.
        case disconnectFrame(LongPollSession)
    }

    /// The connection's identity in its log lines.
    let connection = ConnectionID.next()
    let registry: NamespaceRegistry
    let configuration: ServerConfiguration
    let resources: ServerResources
    private let verifier: CredentialVerifier
    /// Parse and render large bodies away from the event loop.
    let workers: NIOThreadPool
    private let metrics: ServerMetrics
    private let health: ServerHealth
    private let policy: BrowserAccessPolicy
    var state = State.idle
    /// The values the body being received may hold, counted as its bytes arrive, so what
    /// parsing it will take is known before it is parsed (`ParseReservation`).
    private var bodyValues = JSONValueCount()
    /// The server-wide budget of requests in progress.
    private let budget: InFlightBudget
    /// The connection's count of its request bodies, which a parse takes over.
    private let bodyBudget: HTTPBodyBudgetHandler
    /// Counted as an open REST connection (from its first request that is not a stream).
    private var countedAsREST = false

    init(registry: NamespaceRegistry, resources: ServerResources, bodyBudget: HTTPBodyBudgetHandler, configuration: ServerConfiguration) {
        self.registry = registry
        self.resources = resources
        self.bodyBudget = bodyBudget
        self.workers = resources.workers
        self.budget = resources.budget
        self.verifier = resources.verifier
        self.metrics = resources.metrics
        self.health = resources.health
        self.policy = resources.policy
        self.configuration = configuration
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // On close, and when the connection upgrades to a WebSocket.
        if countedAsREST {
            countedAsREST = false
            metrics.connectionClosed(.rest)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            guard case .idle = state else { return }
            if let length = head.headers.first(name: "content-length").flatMap(Int.init), length > configuration.maxRESTBodyBytes {
                refuseBody(head, context: context)
                return
            }
            state = .receiving(head, context.channel.allocator.buffer(capacity: 0))
            bodyValues = JSONValueCount()
            // curl asks this before a body over 1 MB and waits a second for it otherwise. Sent
            // only to a request the checks before this one let through.
            if head.version != .http1_0, head.headers["expect"].contains(where: { $0.lowercased() == "100-continue" }) {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))), promise: nil)
            }
        case .body(var chunk):
            guard case .receiving(let head, var body) = state else { return }
            state = .idle  // drops the enum's reference, so appending does not copy the body
            guard body.readableBytes + chunk.readableBytes <= configuration.maxRESTBodyBytes else {
                refuseBody(head, context: context)
                return
            }
            chunk.withUnsafeReadableBytes { bodyValues.add($0) }
            body.writeBuffer(&chunk)
            state = .receiving(head, body)
        case .end:
            switch state {
            case .receiving(let head, let body):
                state = .idle
                respond(to: head, body: body, context: context)
            case .discarding(let answered):
                state = .idle
                answered.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            case .idle, .streaming, .profiling, .polling, .disconnectFrame:
                break
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .streaming(let stream, let namespace) = state {
            stream.stop()
            namespace.closeStream(stream.id)
            metrics.connectionClosed(.sse)
        }
        if case .profiling(let stream, let namespace) = state {
            stream.stop()
            namespace.closeProfile(stream.id)
            metrics.connectionClosed(.sse)
        }
        if case .polling(let session, let ticket) = state { session.pollGone(ticket) }
        if case .disconnectFrame(let session) = state { session.disconnectFrameClosed() }
        state = .idle
        context.fireChannelInactive()
    }

    /// The body is over the REST size limit: 413, then the rest of it is dropped.
    private func refuseBody(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let error = RESTError(.bodyTooLarge, "Request body exceeds the \(configuration.maxRESTBodyBytes)-byte limit for a REST write")
        var response = HTTPResponse.error(error.status, error.message, print: .compact)
        response.closeConnection = true
        state = .discarding(answered: send(response, keepAlive: false, closing: .output, context: context))
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is HTTPBodyRefused else { return context.fireUserInboundEventTriggered(event) }
        // The body budget refused this request's body, and drops the rest of it.
        if case .receiving = state { state = .idle }
    }

    private func respond(to head: HTTPRequestHead, body: ByteBuffer, context: ChannelHandlerContext) {
        // A request asking for an upgrade that was not made (another path, a malformed
        // handshake) leaves the HTTP parser treating what follows as the other protocol's bytes:
        // later requests would never be read, so the connection closes after this answer.
        let keepAlive = head.isKeepAlive && !head.headers.contains(name: "upgrade")
        // firebase-admin never encodes a space as `+` but sends `+` raw (`1e+20`); form encoders
        // (pyrebase, curl --data-urlencode) mean a space by it.
        let isAdminSDK = head.headers.first(name: "user-agent")?.hasPrefix("Firebase/HTTP/") == true
        let target = RequestTarget(uri: head.uri, plusIsSpace: !isAdminSDK)
        if !countedAsREST, target.path != "/.lp", !head.headers["accept"].contains(where: { $0.lowercased().contains("text/event-stream") }) {
            countedAsREST = true
            metrics.connectionOpened(.rest)
        }
        if target.path == "/.health" || target.path == "/.ready" {
            probe(target.path, method: head.method, keepAlive: keepAlive, context: context)
            return
        }
        if head.method == .OPTIONS {
            let requested = head.headers.first(name: "access-control-request-headers")
            var response = HTTPResponse(.noContent, headers: [("Access-Control-Max-Age", "86400")])
            if let requested { response.headers.append(("Access-Control-Allow-Headers", requested)) }
            send(response, keepAlive: keepAlive, context: context)
            return
        }
        if let response = ConsoleResponder.response(uriPath: target.path, method: head.method, ifNoneMatch: head.headers.first(name: "if-none-match"))
        {
            send(response, keepAlive: keepAlive, context: context)
            return
        }
        if target.path == "/.lp" {
            longPoll(head, target: target, keepAlive: keepAlive, context: context)
            return
        }
        if target.path == "/.ws" {
            // Also where an upgrade refused for its namespace name ends up.
            let name = RequestTarget.namespace(
                parameters: target.parameters, host: head.headers.first(name: "host"), fallback: configuration.defaultNamespace)
            let message = NamespaceName.isValid(name) ? "Expected a WebSocket upgrade at /.ws" : "Invalid namespace: \(NamespaceName.rule)"
            send(.error(.badRequest, message, print: .compact), keepAlive: keepAlive, context: context)
            return
        }
        let request: RESTRequest
        let auth: AuthState
        do throws(RESTError) {
            request = try RESTRequest(head: head, target: target, defaultNamespace: configuration.defaultNamespace)
            if request.callback != nil,
                !policy.allowsScript(
                    fetchSite: head.headers.first(name: "sec-fetch-site"), referer: head.headers.first(name: "referer"),
                    host: head.headers.first(name: "host"))
            {
                configuration.logger.notice("refused a JSONP request from a page the browser policy does not allow")
                throw RESTError(
                    .forbidden, "JSONP (callback=) is not allowed from this page; start the server with --cors-origin to allow its origin")
            }
            auth = try request.identity(verifier: verifier, now: Namespace.now())
        } catch {
            metrics.restRefusedEarly(write: head.method != .GET && head.method != .HEAD)
            var response = HTTPResponse.error(error.status, error.message, print: target.parameters["print"] == "pretty" ? .pretty : .compact)
            if case .methodNotAllowed = error.kind {
                response.headers.append(("Allow", "GET, PUT, POST, PATCH, DELETE, OPTIONS"))
                response.closeConnection = head.method == .HEAD  // a HEAD response may not carry a body
            }
            send(response, keepAlive: keepAlive, context: context)
            return
        }
        configuration.logger.trace(
            "REST \(request.method.rawValue) \(request.path)", metadata: ["namespace": "\(request.namespace)", "connection": "\(connection)"]
        )
        if let endpoint = request.endpoint {
            serve(endpoint, request, as: auth, body: body, keepAlive: keepAlive, context: context)
            return
        }
        if request.method != .get, let refusal = request.writeSizeLimit?.refusal(bodyBytes: body.readableBytes) {
            metrics.restRefusedEarly(write: true)
            send(.error(refusal.status, refusal.message, print: request.print), keepAlive: keepAlive, context: context)
            return
        }
        var reservation: ParseReservation?
        if request.method == .put || request.method == .post || request.method == .patch {
            switch ParseReservation.take(values: bodyValues.upperBound, bodyBytes: body.readableBytes, from: budget) {
            case .success(let taken):
                reservation = taken
            case .failure(let error):
                metrics.restRefusedEarly(write: true)
                send(.error(error.status, error.message, print: request.print), keepAlive: keepAlive, context: context)
                return
            }
        }
        let namespace = registry.namespace(request.namespace)
        if let past = request.past {
            readPast(past, request, as: auth, namespace: namespace, keepAlive: keepAlive, context: context)
        } else if request.isEventStream {
            openStream(request, as: auth, namespace: namespace, context: context)
        } else if request.method == .get {
            read(request, as: auth, namespace: namespace, keepAlive: keepAlive, context: context)
        } else {
            write(request, as: auth, body: body, reservation: reservation, namespace: namespace, keepAlive: keepAlive, context: context)
        }
    }

    private func read(_ request: RESTRequest, as auth: AuthState, namespace: Namespace, keepAlive: Bool, context: ChannelHandlerContext) {
        let started = NIODeadline.now()
        let promise = context.eventLoop.makePromise(of: Answer.self)
        namespace.perform(
            .get(path: request.path, query: request.query), as: auth, connection: connection,
            ticket: .now(for: namespace, from: context.channel.remoteAddress), promise: promise)
        promise.futureResult.assumeIsolated().whenSuccess { answer in
            guard case .data(let node) = answer else {
                self.send(self.response(to: answer, request), keepAlive: keepAlive, context: context)
                return
            }
            var headers = RESTRendering.downloadHeaders(request)
            if request.wantsETag || request.ifNoneMatch != nil {
                let etag = ETag.of(node)
                headers.append(("ETag", etag))
                if request.ifNoneMatch == etag {
                    self.send(HTTPResponse(.notModified, headers: headers), keepAlive: keepAlive, context: context)
                    return
                }
            }
            guard request.print != .silent else {
                self.send(HTTPResponse(.noContent, headers: headers), keepAlive: keepAlive, context: context)
                return
            }
            // `timeout=`: refused instead of answered once the read took longer; a read already
            // over it is not rendered at all.
            let refusedForTime = {
                guard let refusal = request.readLimit?.refusal(afterMilliseconds: (NIODeadline.now() - started).nanoseconds / 1_000_000) else {
                    return false
                }
                self.send(.error(refusal.status, refusal.message, print: request.print), keepAlive: keepAlive, context: context)
                return true
            }
            if refusedForTime() { return }
            if request.callback != nil {
                headers.append(("Content-Type", "application/javascript; charset=utf-8"))
                headers.append(("X-Content-Type-Options", "nosniff"))
            }
            RESTRendering.offLoop(node, above: self.configuration.offLoopBytes, workers: self.workers, eventLoop: context.eventLoop) {
                let data = RESTRendering.data(node, shallow: request.shallow, format: request.format, print: request.print)
                return request.callback.map { RESTRendering.script(calling: $0, with: data) } ?? data
            }.assumeIsolated().whenSuccess { body in
                if refusedForTime() { return }
                // Held against the budget of requests in progress until the socket has taken
                // it: many clients reading a large location at once, slowly, would otherwise
                // each have the server hold a copy. One the budget could never hold goes out
                // unheld (refused, it would be asked for again and again).
                let hold = self.budget.hold(answer: body.count)
                if case .refused = hold {
                    self.send(self.response(to: .refused(AnswerHold.busy), request), keepAlive: keepAlive, context: context)
                } else {
                    self.send(HTTPResponse(.ok, body: body, headers: headers), keepAlive: keepAlive, context: context, holding: hold.taken)
                }
            }
        }
    }

    /// Parses the body and hands the write to the namespace. `reservation` (what the parse
    /// takes) is given back once the namespace has answered, or the parse failed, and the body's
    /// own bytes once the parse has ended, whether or not the client is still there: a body
    /// whose client has gone is not parsed at all.
    private func write(
        _ request: RESTRequest, as auth: AuthState, body: ByteBuffer, reservation: ParseReservation?, namespace: Namespace, keepAlive: Bool,
        context: ChannelHandlerContext
    ) {
        let channel = context.channel
        let ticket = ProfileTicket.now(for: namespace, from: channel.remoteAddress)
        // The body stays counted until its parse has ended, even if the client hangs up meanwhile.
        let bodyHold = bodyBudget.handOverBody()
        RESTBody.operation(
            request.method, body: body, offLoopAbove: configuration.offLoopBytes, workers: workers, eventLoop: context.eventLoop,
            stillWanted: { channel.isActive }
        )
        .assumeIsolated().whenComplete { result in
            switch result {
            case .success(let write):
                self.write(
                    request, write, reservation: reservation, as: auth, namespace: namespace, ticket: ticket, keepAlive: keepAlive, context: context)
            case .failure(let failure):
                reservation?.release()
                let error = failure as? RESTError ?? RESTError(.unavailable, "The server is shutting down")
                self.send(.error(error.status, error.message, print: request.print), keepAlive: keepAlive, context: context)
                self.registry.released(namespace)  // no perform ends this use
            }
            withExtendedLifetime(bodyHold) {}
        }
    }

    private func write(
        _ request: RESTRequest, _ write: RESTWrite, reservation: ParseReservation?, as auth: AuthState, namespace: Namespace,
        ticket: ProfileTicket?, keepAlive: Bool, context: ChannelHandlerContext
    ) {
        let promise = context.eventLoop.makePromise(of: Answer.self)
        namespace.perform(
            write.operation(at: request.path, ifMatch: request.ifMatch), as: auth, connection: connection, ticket: ticket, promise: promise)
        promise.futureResult.whenComplete { _ in reservation?.release() }
        promise.futureResult.assumeIsolated().whenSuccess { answer in
            self.send(self.response(to: answer, request), keepAlive: keepAlive, context: context)
        }
    }

    /// The HTTP response to a namespace's answer (a read's data is answered by `read`).
    private func response(to answer: Answer, _ request: RESTRequest) -> HTTPResponse {
        switch answer {
        case .written(let result, let location):
            let headers = (request.wantsETag || request.ifMatch != nil ? location : nil).map { [("ETag", ETag.of($0))] } ?? []
            return request.print == .silent
                ? HTTPResponse(.noContent, headers: headers)
                : HTTPResponse(.ok, body: RESTRendering.result(result, format: request.format, print: request.print), headers: headers)
        case .refused(.preconditionFailed(let current?)):
            // The body is the current value, not an error object: clients retry with it.
            let body = RESTRendering.data(current, shallow: false, format: request.format, print: request.print)
            return HTTPResponse(.preconditionFailed, body: body, headers: [("ETag", ETag.of(current))])
        case .refused(let refusal):
            let (status, message) = refusal.http
            return .error(status, message, print: request.print)
        case .data(let node):
            return HTTPResponse(.ok, body: RESTRendering.data(node, shallow: request.shallow, format: request.format, print: request.print))
        case .ok, .encoded, .authenticated:
            return HTTPResponse(.ok, body: Array("null".utf8))
        }
    }

    /// Answers with an event stream if the caller may read there: the head, then the location's
    /// data and its changes as they come. A refusal is an ordinary JSON error response.
    private func openStream(_ request: RESTRequest, as auth: AuthState, namespace: Namespace, context: ChannelHandlerContext) {
        let stream = EventStream(context: context, namespace: namespace.name, connection: connection, metrics: metrics, configuration: configuration)
        state = .streaming(stream, namespace)
        metrics.connectionOpened(.sse)
        let promise = context.eventLoop.makePromise(of: Answer.self)
        namespace.openStream(
            stream.id, at: request.path, query: request.query, format: request.format, as: auth,
            outbound: EventStreamOutbound(eventLoop: context.eventLoop, stream: stream),
            ticket: .now(for: namespace, from: context.channel.remoteAddress), promise: promise
        )
        promise.futureResult.assumeIsolated().whenSuccess { answer in
            guard case .streaming(let current, _) = self.state, current === stream else { return }
            if case .refused = answer {
                stream.stop()
                return self.endRefusedStream(answer, request, context: context)
            }
            self.writeEventStreamHead(context: context)
            stream.start(keepAliveEvery: self.configuration.eventStreamKeepAlive, expiresAt: auth.expiresAt)
        }
    }

    /// Answers with the namespace's profiler stream if the caller is an admin: the head, then
    /// a `log` event for every operation until the client goes. A refusal is an ordinary JSON
    /// error response.
    private func openProfile(_ request: RESTRequest, as auth: AuthState, context: ChannelHandlerContext) {
        let namespace = registry.namespace(request.namespace)
        let stream = ProfileStream(context: context, namespace: namespace.name, connection: connection, logger: configuration.logger)
        state = .profiling(stream, namespace)
        metrics.connectionOpened(.sse)
        let promise = context.eventLoop.makePromise(of: Answer.self)
        namespace.openProfile(stream.id, as: auth, outbound: ProfileOutbound(eventLoop: context.eventLoop, stream: stream), promise: promise)
        promise.futureResult.assumeIsolated().whenSuccess { answer in
            guard case .profiling(let current, _) = self.state, current === stream else { return }
            if case .refused = answer {
                stream.stop()
                return self.endRefusedStream(answer, request, context: context)
            }
            self.writeEventStreamHead(context: context)
            stream.start(keepAliveEvery: self.configuration.eventStreamKeepAlive)
        }
    }

    /// A stream the namespace refused (its stream already stopped): the connection is idle
    /// again and the refusal is an ordinary error response, after which it closes.
    private func endRefusedStream(_ answer: Answer, _ request: RESTRequest, context: ChannelHandlerContext) {
        state = .idle
        metrics.connectionClosed(.sse)
        send(response(to: answer, request), keepAlive: false, context: context)
    }

    /// The head of an event stream's answer (200, `text/event-stream`), once the namespace took it.
    private func writeEventStreamHead(context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/event-stream; charset=utf-8")
        HTTPRequestHandler.addCommonHeaders(to: &headers)
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
    }

    /// The server's own endpoints under `/.settings` and `/.inspect`.
    private func serve(
        _ endpoint: ServerEndpoint, _ request: RESTRequest, as auth: AuthState, body: ByteBuffer, keepAlive: Bool, context: ChannelHandlerContext
    ) {
        let refuse = { (status: HTTPResponseStatus, message: String) in
            self.send(.error(status, message, print: request.print), keepAlive: keepAlive, context: context)
        }
        switch endpoint {
        case .databases:
            guard request.method == .get else { return refuse(.methodNotAllowed, "Use GET") }
            guard auth == .admin || configuration.auth.emulatorMode else { return refuse(.unauthorized, "Permission denied") }
            let names = JSONValue.array(registry.names.map { .string($0) })
            send(HTTPResponse(.ok, body: Array(JSONWriter.string(names).utf8)), keepAlive: keepAlive, context: context)
        case .metrics:
            guard request.method == .get else { return refuse(.methodNotAllowed, "Use GET") }
            if let refusal = MetricsAccess.refusal(remote: context.channel.remoteAddress, relayed: request.isRelayed, auth: auth) {
                return refuse(HTTPResponseStatus(statusCode: refusal.status), refusal.message)
            }
            // Measuring the namespaces' sizes walks their data: on a worker thread.
            let registry = self.registry
            let metrics = self.metrics
            let (budget, backlog) = (resources.budget, resources.backlogBudget)
            workers.runIfActive(eventLoop: context.eventLoop) { () -> [UInt8] in
                registry.updateTreeSizes()
                return metrics.render(budget: budget, backlog: backlog)
            }.assumeIsolated().whenComplete { result in
                switch result {
                case .success(let text):
                    let response = HTTPResponse(.ok, body: text, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")])
                    self.send(response, keepAlive: keepAlive, context: context)
                case .failure:
                    refuse(.serviceUnavailable, "The server is shutting down")
                }
            }
        case .rules:
            // The namespace decides who may read or replace its rules, and loads them.
            let promise = context.eventLoop.makePromise(of: Answer.self)
            switch request.method {
            case .get:
                registry.namespace(request.namespace).rulesSource(as: auth, promise: promise)  // which ends this use
            case .put:
                // Refused before it is copied: the namespace would refuse it anyway.
                guard body.readableBytes <= Namespace.maxRulesBytes else {
                    return refuse(.payloadTooLarge, "A rules document may be at most \(Namespace.maxRulesBytes) bytes")
                }
                let text = String(decoding: body.readableBytesView, as: UTF8.self)
                registry.namespace(request.namespace).setOwnRules(text, as: auth, promise: promise)  // which ends this use
            default:
                return refuse(.methodNotAllowed, "Use GET or PUT on /.settings/rules.json")
            }
            promise.futureResult.assumeIsolated().whenSuccess { answer in
                switch answer {
                case .encoded(let source): self.send(HTTPResponse(.ok, body: source), keepAlive: keepAlive, context: context)
                case .refused(let refusal): refuse(refusal.http.status, refusal.http.message)
                default: self.send(HTTPResponse(.ok, body: Array(#"{"status":"ok"}"#.utf8)), keepAlive: keepAlive, context: context)
                }
            }
        case .profile:
            guard request.method == .get else { return refuse(.methodNotAllowed, "Use GET on /.settings/profile.json") }
            guard request.isEventStream else {
                return refuse(.badRequest, "The profile is a stream: ask for it with Accept: text/event-stream")
            }
            openProfile(request, as: auth, context: context)
        case .rulesCoverage(let format):
            serveCoverage(format, request, as: auth, keepAlive: keepAlive, context: context)
        case .rulesSimulation:
            guard request.method == .post else { return refuse(.methodNotAllowed, "Use POST on /.settings/rules/simulate.json") }
            guard body.readableBytes <= 2 * Namespace.maxRulesBytes else {
                return refuse(.payloadTooLarge, "A simulation may be at most \(2 * Namespace.maxRulesBytes) bytes")
            }
            let simulation: RulesSimulation
            do throws(RESTError) {
                simulation = try RulesSimulation(body: Array(body.readableBytesView))
            } catch {
                return refuse(error.status, error.message)
            }
            // The namespace decides who may simulate (admins, as for the rules) and runs it.
            let promise = context.eventLoop.makePromise(of: Answer.self)
            registry.namespace(request.namespace).simulateRules(simulation, as: auth, promise: promise)  // which ends this use
            promise.futureResult.assumeIsolated().whenSuccess { answer in
                switch answer {
                case .encoded(let decision): self.send(HTTPResponse(.ok, body: decision), keepAlive: keepAlive, context: context)
                case .refused(let refusal): refuse(refusal.http.status, refusal.http.message)
                default: refuse(.internalServerError, "Unexpected answer to a rules simulation")
                }
            }
        }
    }

    /// `GET /.health`: 200 while the process serves. `GET /.ready`: 200 while writes are taken,
    /// 503 with the reason while storage refuses them or the server shuts down. No credential
    /// is needed or looked at.
    private func probe(_ path: String, method: HTTPMethod, keepAlive: Bool, context: ChannelHandlerContext) {
        guard method == .GET else {
            send(.error(.methodNotAllowed, "Use GET", print: .compact), keepAlive: keepAlive, context: context)
            return
        }
        let reason = path == "/.ready" ? health.notReadyReason : nil
        let body: JSONValue = .object(
            [JSONMember("status", .string(reason == nil ? "ok" : "unavailable"))] + (reason.map { [JSONMember("reason", .string($0))] } ?? [])
        )
        send(
            HTTPResponse(reason == nil ? .ok : .serviceUnavailable, body: Array(JSONWriter.string(body).utf8)), keepAlive: keepAlive, context: context
        )
    }

    /// Writes `response`; `hold` is let go once the socket has taken it (or the connection ended).
    func send(_ response: HTTPResponse, keepAlive: Bool, context: ChannelHandlerContext, holding hold: BudgetHold? = nil) {
        _ = send(response, keepAlive: keepAlive, closing: .all, context: context, holding: hold)
    }

    /// Writes `response`, then without keep-alive closes the connection: whole, or only its
    /// output while a refused body may still arrive (`.output`). Completes once the response
    /// is written and that close is done.
    private func send(
        _ response: HTTPResponse, keepAlive: Bool, closing mode: CloseMode, context: ChannelHandlerContext, holding hold: BudgetHold? = nil
    ) -> EventLoopFuture<Void> {
        var headers = HTTPHeaders()
        if response.hasBody {
            headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
            headers.add(name: "Content-Length", value: String(response.body.count))
        }
        HTTPRequestHandler.addCommonHeaders(to: &headers)
        for (name, value) in response.headers { headers.replaceOrAdd(name: name, value: value) }
        let keepAlive = keepAlive && !response.closeConnection
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: response.status, headers: headers))), promise: nil)
        if response.hasBody, !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if let hold { done.whenComplete { _ in withExtendedLifetime(hold) {} } }
        return keepAlive ? done : done.closing(mode, context: context)
    }

    /// No caching, and CORS open to every origin: browsers may call the API directly.
    static func addCommonHeaders(to headers: inout HTTPHeaders) {
        headers.add(name: "Cache-Control", value: "no-cache")
        headers.add(name: "Access-Control-Allow-Origin", value: "*")
        headers.add(name: "Access-Control-Allow-Methods", value: "GET, PUT, POST, PATCH, DELETE, OPTIONS")
        headers.add(
            name: "Access-Control-Allow-Headers",
            value: "Content-Type, Authorization, X-Firebase-ETag, If-Match, If-None-Match, X-HTTP-Method-Override, X-Firebase-Decoding"
        )
        headers.add(name: "Access-Control-Expose-Headers", value: "ETag")
    }
}
