import KindlingCore
import Logging
import NIOCore
import NIOHTTP1

/// Plain HTTP requests on the server's port (everything but the WebSocket upgrade at `/.ws`).
///
/// Serves `/.inspect/databases.json` and answers every response with `Content-Length` in one
/// write (with TCP_NODELAY on the socket, so no response waits on Nagle's algorithm).
final class HTTPRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let registry: NamespaceRegistry
    private let configuration: ServerConfiguration
    private var head: HTTPRequestHead?

    init(registry: NamespaceRegistry, configuration: ServerConfiguration) {
        self.registry = registry
        self.configuration = configuration
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body:
            break
        case .end:
            guard let head else { return }
            self.head = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let target = RequestTarget(uri: head.uri)
        if head.method == .OPTIONS {
            send(.noContent, body: nil, keepAlive: head.isKeepAlive, context: context)
            return
        }
        if target.path == "/.inspect/databases.json" {
            let names = JSONValue.array(registry.names.map { .string($0) })
            send(.ok, body: Array(JSONWriter.string(names).utf8), keepAlive: head.isKeepAlive, context: context)
            return
        }
        if target.path == "/.ws" {
            let message = #"{"error":"Expected a WebSocket upgrade at /.ws"}"#
            send(.badRequest, body: Array(message.utf8), keepAlive: head.isKeepAlive, context: context)
            return
        }
        let message = JSONWriter.string(.object([JSONMember("error", .string("Not found: \(target.path)"))]))
        send(.notFound, body: Array(message.utf8), keepAlive: head.isKeepAlive, context: context)
    }

    private func send(_ status: HTTPResponseStatus, body: [UInt8]?, keepAlive: Bool, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body?.count ?? 0))
        headers.add(name: "Cache-Control", value: "no-cache")
        headers.add(name: "Access-Control-Allow-Origin", value: "*")
        headers.add(name: "Access-Control-Allow-Methods", value: "GET, PUT, POST, PATCH, DELETE, OPTIONS")
        headers.add(name: "Access-Control-Allow-Headers", value: "Content-Type, Authorization, X-Firebase-ETag, If-Match, If-None-Match")
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        if let body { context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil) }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive { done.assumeIsolated().whenComplete { _ in context.close(promise: nil) } }
    }
}
