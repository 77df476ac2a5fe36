import NIOCore
import NIOHTTP1

/// Sends the HTTP GET that asks a server for the WebSocket upgrade (NIO's client upgrader adds
/// the upgrade headers). `WebSocketClient` puts it in every client pipeline.
package final class WebSocketUpgradeRequest: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPClientResponsePart
    package typealias OutboundOut = HTTPClientRequestPart

    let uri: String
    let host: String

    package init(uri: String, host: String) {
        self.uri = uri
        self.host = host
    }

    package func channelActive(context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: host)
        headers.add(name: "Content-Length", value: "0")
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: uri, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }
}
