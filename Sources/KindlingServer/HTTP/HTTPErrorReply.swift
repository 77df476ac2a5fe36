import NIOCore
import NIOHTTP1

/// The server's own answers from the handlers in front of the REST handler (a refused browser,
/// an exhausted body budget, a request that does not parse, a connection over the limit): JSON
/// with `Connection: close`, then the connection closes.
enum HTTPErrorReply {
    /// `{"error": message}`, then the connection closes.
    static func sendAndClose(
        _ status: HTTPResponseStatus, _ message: String, headers extra: [(String, String)] = [], context: ChannelHandlerContext
    ) {
        send(status, body: RESTRendering.error(message, print: .compact), headers: extra, closing: .all, context: context)
    }

    /// `{"error": message}` to a request whose body is refused while it may still be arriving,
    /// then only the output side closes (see `HTTPBodyRefused`); completes once it has.
    static func refuseBody(
        _ status: HTTPResponseStatus, _ message: String, headers extra: [(String, String)] = [], context: ChannelHandlerContext
    ) -> EventLoopFuture<Void> {
        send(status, body: RESTRendering.error(message, print: .compact), headers: extra, closing: .output, context: context)
    }

    /// `body` as JSON, then the connection closes: whole (`.all`), or only its output, so what
    /// the client still sends is read rather than answered with a reset (`.output`). Completes
    /// once that close is done (or failed: the whole connection is then closed).
    @discardableResult
    static func send(
        _ status: HTTPResponseStatus, body: [UInt8], headers extra: [(String, String)] = [], closing mode: CloseMode, context: ChannelHandlerContext
    ) -> EventLoopFuture<Void> {
        var headers = HTTPHeaders([
            ("Content-Type", "application/json; charset=utf-8"), ("Content-Length", String(body.count)), ("Connection", "close"),
        ])
        for (name, value) in extra { headers.add(name: name, value: value) }
        context.write(NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        return context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).closing(mode, context: context)
    }
}
