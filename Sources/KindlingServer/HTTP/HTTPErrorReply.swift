import NIOCore
import NIOHTTP1

/// The server's own error answers from the handlers in front of the REST handler (a refused
/// browser, an exhausted body budget, a request that does not parse): `{"error": …}` as JSON with
/// `Connection: close`, then the connection closes.
enum HTTPErrorReply {
    static func sendAndClose(
        _ status: HTTPResponseStatus, _ message: String, headers extra: [(String, String)] = [], context: ChannelHandlerContext
    ) {
        let body = RESTRendering.error(message, print: .compact)
        var headers = HTTPHeaders([("Content-Type", "application/json; charset=utf-8"), ("Content-Length", String(body.count)), ("Connection", "close")])
        for (name, value) in extra { headers.add(name: name, value: value) }
        context.write(NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}
