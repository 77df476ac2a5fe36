import NIOCore
import NIOHTTP1
import NIOWebSocket

/// The WebSocket upgrade: SwiftNIO's upgrader checks the handshake and answers it; the pipeline
/// after it is built here, with SwiftNIO's frame encoder but not its decoder, since the session
/// reads frames from the socket's bytes itself (`ClientFrameReader`). Taking the decoder out
/// after SwiftNIO added it would not do: it leaves the pipeline a loop turn later, and frames it
/// decoded meanwhile would reach a session that reads bytes.
struct WebSocketUpgrader: HTTPServerProtocolUpgrader, Sendable {
    private let handshake: NIOWebSocketServerUpgrader
    private let pipeline: @Sendable (any Channel, HTTPRequestHead) throws -> Void

    /// `shouldUpgrade` gives the extra response headers, or nil to refuse the upgrade;
    /// `pipeline` adds the session's handlers after the frame encoder (on the channel's loop).
    init(
        shouldUpgrade: @escaping @Sendable (any Channel, HTTPRequestHead) -> EventLoopFuture<HTTPHeaders?>,
        pipeline: @escaping @Sendable (any Channel, HTTPRequestHead) throws -> Void
    ) {
        // SwiftNIO's frame size limit and pipeline handler belong to the pipeline it would
        // build, which `upgrade` below builds instead: neither is used.
        self.handshake = NIOWebSocketServerUpgrader(
            maxFrameSize: Int(Int32.max),
            automaticErrorHandling: false,
            shouldUpgrade: shouldUpgrade,
            upgradePipelineHandler: { channel, _ in channel.eventLoop.makeSucceededVoidFuture() }
        )
        self.pipeline = pipeline
    }

    var supportedProtocol: String { handshake.supportedProtocol }

    var requiredUpgradeHeaders: [String] { handshake.requiredUpgradeHeaders }

    func buildUpgradeResponse(channel: any Channel, upgradeRequest: HTTPRequestHead, initialResponseHeaders: HTTPHeaders) -> EventLoopFuture<
        HTTPHeaders
    > {
        guard Self.isOpeningHandshake(upgradeRequest) else {
            return channel.eventLoop.makeFailedFuture(NIOWebSocketUpgradeError.invalidUpgradeHeader)
        }
        return handshake.buildUpgradeResponse(channel: channel, upgradeRequest: upgradeRequest, initialResponseHeaders: initialResponseHeaders)
    }

    /// What RFC 6455 §4.2.1 asks of an opening handshake beyond what SwiftNIO checks: a GET of
    /// HTTP/1.1 or later with a `Host`, `upgrade` among the `Connection` tokens, and a
    /// `Sec-WebSocket-Key` that is 16 bytes in base64 (24 characters, the last two `=`, the one
    /// before them carrying no bits past the 16th byte). Anything else is answered as the plain
    /// HTTP request it is.
    static func isOpeningHandshake(_ head: HTTPRequestHead) -> Bool {
        guard head.method == .GET, head.version.major > 1 || (head.version.major == 1 && head.version.minor >= 1), head.headers.contains(name: "host")
        else { return false }
        let connection = head.headers["connection"].flatMap { $0.split(separator: ",") }
        guard connection.contains(where: { $0.trimmingWhitespace().lowercased() == "upgrade" }) else { return false }
        let keys = head.headers["sec-websocket-key"]
        guard keys.count == 1, let key = keys.first else { return false }
        let bytes = Array(key.trimmingWhitespace().utf8)
        guard bytes.count == 24, bytes[22] == UInt8(ascii: "="), bytes[23] == UInt8(ascii: "=") else { return false }
        // The 22nd digit holds the last byte's low two bits and four zero bits: A, Q, g or w.
        guard "AQgw".utf8.contains(bytes[21]) else { return false }
        return bytes[..<22].allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "+"), UInt8(ascii: "/"):
                true
            default: false
            }
        }
    }

    func upgrade(context: ChannelHandlerContext, upgradeRequest: HTTPRequestHead) -> EventLoopFuture<Void> {
        let channel = context.channel
        return context.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(WebSocketFrameEncoder())
            try pipeline(channel, upgradeRequest)
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    fileprivate func trimmingWhitespace() -> SubSequence {
        let isSpace = { (character: Character) in character == " " || character == "\t" }
        let start = firstIndex { !isSpace($0) } ?? endIndex
        let end = lastIndex { !isSpace($0) }.map { index(after: $0) } ?? start
        return self[start..<Swift.max(start, end)]
    }
}
