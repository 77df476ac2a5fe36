import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// One realtime WebSocket to the server, as the SDK's transport.
///
/// It only moves text: whole messages out (split into a count frame and 16,384-unit pieces when
/// long, as the server's `FrameAssembler` expects) and raw frames in. What the messages mean is
/// the `Repo`'s business, so the connection stays small and replaceable on every reconnect.
struct WebSocketConnection: Sendable {
    /// Identifies this connection among reconnects, so late frames from an old socket are ignored.
    let id: Int
    let channel: any Channel

    /// The most UTF-16 units one outgoing frame carries (what the official SDKs use).
    static let maxFrameUnits = 16_384

    /// Opens `ws://host:port/.ws?v=5&ns=NS` (`wss://` with a `tls` context). Frames and the close
    /// are reported to the callbacks, on the channel's event loop, with this connection's `id`.
    static func open(
        id: Int,
        host: String,
        port: Int,
        namespace: String,
        tls: NIOSSLContext?,
        onFrame: @escaping @Sendable (WebSocketConnection, String) -> Void,
        onClose: @escaping @Sendable (Int) -> Void
    ) async throws -> WebSocketConnection {
        let uri = "/.ws?v=5&ns=\(namespace.addingPercentEscapes)"
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: tls, serverHostname: ClientTLS.serverName(host)))
                    }
                    let upgrader = NIOWebSocketClientUpgrader(
                        maxFrameSize: 1 << 26,
                        automaticErrorHandling: true,
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(
                                    NIOWebSocketFrameAggregator(
                                        minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1 << 16,
                                        maxAccumulatedFrameSize: 1 << 26))
                                try channel.pipeline.syncOperations.addHandler(
                                    FrameForwarder(id: id, onFrame: onFrame, onClose: onClose))
                            }
                        }
                    )
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(
                        leftOverBytesStrategy: .forwardBytes,
                        withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in })
                    )
                    try channel.pipeline.syncOperations.addHandler(
                        WebSocketUpgradeRequest(uri: uri, host: "\(host):\(port)"))
                }
            }
            .connect(host: host, port: port)
            .get()
        // If the upgrade never happens (not a Kindling server), closing still reaches the repo.
        channel.closeFuture.whenComplete { _ in onClose(id) }
        return WebSocketConnection(id: id, channel: channel)
    }

    /// Sends one message, split when it is longer than one frame may be.
    func send(_ message: String) {
        for frame in Self.frames(for: message) { sendFrame(frame) }
    }

    /// The frames for a message: itself, or a count frame and then pieces of at most
    /// 16,384 UTF-16 units that never cut a character in two.
    static func frames(for message: String) -> [String] {
        guard message.utf16.count > maxFrameUnits else { return [message] }
        var pieces: [String] = []
        var current = ""
        var units = 0
        for scalar in message.unicodeScalars {
            let size = scalar.utf16.count
            if units + size > maxFrameUnits {
                pieces.append(current)
                current = ""
                units = 0
            }
            current.unicodeScalars.append(scalar)
            units += size
        }
        if !current.isEmpty { pieces.append(current) }
        return [String(pieces.count)] + pieces
    }

    /// Sends one raw text frame (a keepalive `0` goes through here too).
    func sendFrame(_ text: String) {
        var buffer = channel.allocator.buffer(capacity: text.utf8.count)
        buffer.writeString(text)
        let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: buffer)
        // Always through the event loop's task queue, even on the loop itself: frames then leave
        // in the order they were handed over (the repo hands them over under its lock), whichever
        // thread that was on.
        let channel = self.channel
        channel.eventLoop.execute { channel.writeAndFlush(frame, promise: nil) }
    }

    /// Drops the TCP connection without a close frame, as a killed process would.
    func abort() {
        let channel = self.channel
        channel.eventLoop.execute { channel.close(promise: nil) }
    }

    /// Ends the connection politely with a close frame.
    func close() {
        var data = channel.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: .normalClosure)
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: data)
        let channel = self.channel
        channel.eventLoop.execute {
            channel.writeAndFlush(frame).whenComplete { _ in channel.close(promise: nil) }
        }
    }
}

extension String {
    /// Percent-encodes everything but unreserved characters, for a query parameter.
    fileprivate var addingPercentEscapes: String {
        var result = ""
        for byte in utf8 {
            let character = Character(Unicode.Scalar(byte))
            if character.isASCII && (character.isLetter || character.isNumber || "-._~".contains(character)) {
                result.append(character)
            } else {
                result += "%" + String(byte, radix: 16, uppercase: true).leftPadded
            }
        }
        return result
    }

    fileprivate var leftPadded: String { count == 1 ? "0" + self : self }
}

/// Hands text frames to the repo; answers pings; reports the end of the connection.
private final class FrameForwarder: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let id: Int
    let onFrame: @Sendable (WebSocketConnection, String) -> Void
    let onClose: @Sendable (Int) -> Void

    init(id: Int, onFrame: @escaping @Sendable (WebSocketConnection, String) -> Void, onClose: @escaping @Sendable (Int) -> Void) {
        self.id = id
        self.onFrame = onFrame
        self.onClose = onClose
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            onFrame(WebSocketConnection(id: id, channel: context.channel), String(buffer: frame.unmaskedData))
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            context.close(promise: nil)
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        onClose(id)
        context.fireChannelInactive()
    }
}
