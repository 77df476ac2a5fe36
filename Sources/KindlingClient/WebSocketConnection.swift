import KindlingProtocol
import KindlingWebSocketClient
import NIOCore
import NIOPosix
import NIOSSL
import NIOWebSocket

/// One realtime WebSocket to the server, as the SDK's transport.
///
/// It only moves text: whole messages out (split by `FrameSplitter` into a count frame and
/// 16,384-unit pieces when long, as the server's `FrameAssembler` expects) and raw frames in.
/// What the messages mean is the `Repo`'s business, so the connection stays small and
/// replaceable on every reconnect.
struct WebSocketConnection: Sendable {
    /// Identifies this connection among reconnects, so late frames from an old socket are ignored.
    let id: Int
    let channel: any Channel

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
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
        let channel = try await WebSocketClient.bootstrap(
            bootstrap, host: host, hostHeader: "\(host):\(port)", uri: uri, tls: tls
        ) { channel in
            try channel.pipeline.syncOperations.addHandler(FrameForwarder(id: id, onFrame: onFrame, onClose: onClose))
        }
        .connect(host: host, port: port)
        .get()
        // If the upgrade never happens (not a Kindling server), closing still reaches the repo.
        channel.closeFuture.whenComplete { _ in onClose(id) }
        return WebSocketConnection(id: id, channel: channel)
    }

    /// Sends one message, split when it is longer than one frame may be.
    func send(_ message: String) {
        for frame in FrameSplitter.frames(Array(message.utf8), measuring: .utf16Units) {
            sendFrame(ByteBuffer(bytes: frame))
        }
    }

    /// The frames for a message, as the official SDKs cut it (`FrameSplitter` in UTF-16 units).
    static func frames(for message: String) -> [String] {
        FrameSplitter.frames(Array(message.utf8), measuring: .utf16Units).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Sends one raw text frame (a keepalive `0` goes through here too).
    func sendFrame(_ text: String) {
        sendFrame(ByteBuffer(string: text))
    }

    private func sendFrame(_ buffer: ByteBuffer) {
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
