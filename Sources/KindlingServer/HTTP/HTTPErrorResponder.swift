import NIOCore
import NIOHTTP1

/// Answers a request the HTTP parser could not read, in place of SwiftNIO's handler (an empty
/// 400): a method the parser does not know gets 405 with the error JSON and an `Allow` header,
/// as for any other method the REST API lacks; anything else 400 with the error JSON. The
/// connection then closes (the parser cannot resynchronise). Nothing is sent when a response
/// has already begun.
final class HTTPErrorResponder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private var responseUnderway = false

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        if !responseUnderway {
            let status: HTTPResponseStatus
            let message: String
            var headers: [(String, String)] = []
            switch parserError {
            case .invalidMethod:
                status = .methodNotAllowed
                message = "Method not supported; use GET, PUT, POST, PATCH or DELETE"
                headers.append(("Allow", "GET, PUT, POST, PATCH, DELETE, OPTIONS"))
            case .headerOverflow:
                status = .requestHeaderFieldsTooLarge
                message = "Request headers too large"
            default:
                status = .badRequest
                message = "Malformed HTTP request"
            }
            HTTPErrorReply.sendAndClose(status, message, headers: headers, context: context)
        } else {
            context.close(promise: nil)
        }
        context.fireErrorCaught(error)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.code >= 200: responseUnderway = true
        case .end: responseUnderway = false
        case .head, .body: break
        }
        context.write(data, promise: promise)
    }
}
