import NIOCore
import NIOEmbedded
import NIOHTTP1

@testable import KindlingServer

/// An `HTTPRequestHandler` on an embedded channel, behind the body budget handler as in the
/// server's pipeline, with a client's side: request parts in, response parts read back.
///
/// The namespace answers from its own queue, so each read waits for the channel's next write
/// (`waitForOutboundWrite`, which also runs what the channel's loop has queued), never for a
/// length of time.
final class EmbeddedHTTPConnection {
    struct Response {
        var status: HTTPResponseStatus
        var headers: HTTPHeaders
        var body: String
    }

    struct UnexpectedPart: Error {
        var part: HTTPServerResponsePart
    }

    let channel: NIOAsyncTestingChannel

    private init(channel: NIOAsyncTestingChannel) {
        self.channel = channel
    }

    /// A connection to `server`, set up as the server sets up a plain HTTP one.
    static func open(_ server: EmbeddedServer) async throws -> EmbeddedHTTPConnection {
        let channel = NIOAsyncTestingChannel()
        try await channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 9000)).get()
        try await channel.testingEventLoop.executeInContext {
            let bodyBudget = HTTPBodyBudgetHandler(budget: server.resources.budget, logger: server.configuration.logger)
            try channel.pipeline.syncOperations.addHandler(bodyBudget)
            try channel.pipeline.syncOperations.addHandler(
                HTTPRequestHandler(
                    registry: server.registry, resources: server.resources, bodyBudget: bodyBudget, configuration: server.configuration)
            )
        }
        return EmbeddedHTTPConnection(channel: channel)
    }

    /// Sends a request's head (with `Host`), and nothing more.
    func sendHead(_ method: HTTPMethod, _ uri: String, headers: [(String, String)] = [], version: HTTPVersion = .http1_1) async throws {
        var head = HTTPRequestHead(version: version, method: method, uri: uri)
        head.headers.add(name: "Host", value: "127.0.0.1")
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        try await channel.writeInbound(HTTPServerRequestPart.head(head))
    }

    /// Sends a request: its head (with `Content-Length` when it has a body), its body in one
    /// part, and its end.
    func send(
        _ method: HTTPMethod, _ uri: String, headers: [(String, String)] = [], body: String? = nil, version: HTTPVersion = .http1_1
    ) async throws {
        try await sendHead(method, uri, headers: headers + (body.map { [("Content-Length", String($0.utf8.count))] } ?? []), version: version)
        if let body { try await channel.writeInbound(HTTPServerRequestPart.body(ByteBuffer(string: body))) }
        try await channel.writeInbound(HTTPServerRequestPart.end(nil))
    }

    /// The next response part the handler wrote, waiting for it.
    func nextPart() async throws -> HTTPServerResponsePart {
        try await channel.waitForOutboundWrite(as: HTTPServerResponsePart.self)
    }

    /// The head of the next response.
    func nextHead() async throws -> HTTPResponseHead {
        let part = try await nextPart()
        guard case .head(let head) = part else { throw UnexpectedPart(part: part) }
        return head
    }

    /// The next body chunk, as text.
    func nextBody() async throws -> String {
        let part = try await nextPart()
        guard case .body(.byteBuffer(let buffer)) = part else { throw UnexpectedPart(part: part) }
        return String(buffer: buffer)
    }

    /// Sends a request and reads its whole response.
    func request(
        _ method: HTTPMethod, _ uri: String, headers: [(String, String)] = [], body: String? = nil, version: HTTPVersion = .http1_1
    ) async throws -> Response {
        try await send(method, uri, headers: headers, body: body, version: version)
        return try await response()
    }

    /// The next whole response: its head, its body and its end.
    func response() async throws -> Response {
        let head = try await nextHead()
        var text = ""
        while true {
            let part = try await nextPart()
            switch part {
            case .body(.byteBuffer(let buffer)): text += String(buffer: buffer)
            case .end: return Response(status: head.status, headers: head.headers, body: text)
            default: throw UnexpectedPart(part: part)
            }
        }
    }

    /// Completes once the channel has closed.
    func closed() async throws {
        try await channel.closeFuture.get()
    }

    /// Closes the channel if the handler has not.
    func finish() async throws {
        _ = try await channel.finish(acceptAlreadyClosed: true)
    }
}
