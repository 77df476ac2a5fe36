import KindlingTesting
import NIOCore
import NIOEmbedded
import NIOWebSocket

@testable import KindlingServer

/// A `WebSocketSessionHandler` on an embedded channel, as the server's upgrade leaves it (behind
/// SwiftNIO's frame encoder), with a client's side: masked frames in, the server's frames read
/// back from what the channel wrote.
///
/// The session's namespace answers from its own queue, so its frames arrive in their own time:
/// each read waits for the channel's next write (`waitForOutboundWrite`, which also runs what the
/// channel's loop has queued), never for a length of time.
final class EmbeddedWebSocketSession {
    struct Frame: Equatable {
        var fin: Bool
        var opcode: UInt8
        var payload: [UInt8]

        var text: String { String(decoding: payload, as: UTF8.self) }

        /// A close frame's code (nil for another frame, or a close without one).
        var closeCode: Int? {
            guard opcode == 0x8, payload.count >= 2 else { return nil }
            return Int(payload[0]) << 8 | Int(payload[1])
        }
    }

    let channel: NIOAsyncTestingChannel
    /// What the channel wrote and no frame has been read from yet.
    private var written: [UInt8] = []

    private init(channel: NIOAsyncTestingChannel) {
        self.channel = channel
    }

    /// A realtime connection to namespace `namespace` of `server`, set up as the server sets one
    /// up after the upgrade; its handshake is the first thing it writes.
    static func open(_ server: EmbeddedServer, namespace: String = "t", handshakeHost: String = "example.test:443") async throws
        -> EmbeddedWebSocketSession
    {
        let channel = NIOAsyncTestingChannel()
        try await channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 9000)).get()
        try await channel.testingEventLoop.executeInContext {
            let shares = server.resources.perEventLoop.shares(of: channel.eventLoop)
            let session = WebSocketSessionHandler(
                namespace: server.registry.namespace(namespace), outbox: shares.outbox, inbox: shares.inbox, idleSweep: shares.idleSweep,
                handshakeHost: handshakeHost, lastSession: nil, verifier: server.resources.verifier, budget: server.resources.budget,
                backlogBudget: server.resources.backlogBudget, metrics: server.resources.metrics, configuration: server.configuration
            )
            try channel.pipeline.syncOperations.addHandler(WebSocketFrameEncoder())
            try channel.pipeline.syncOperations.addHandler(session)
        }
        return EmbeddedWebSocketSession(channel: channel)
    }

    /// Sends `bytes` as the client's socket would (one read).
    func send(bytes: [UInt8]) async throws {
        try await channel.writeInbound(ByteBuffer(bytes: bytes))
    }

    /// Sends `text` in one masked text frame.
    func send(_ text: String) async throws {
        try await send(bytes: RawConnection.frame(opcode: 1, Array(text.utf8)))
    }

    /// Sends request `number` (`{"t":"d","d":{"r":N,"a":ACTION,"b":BODY}}`), `body` given as JSON text.
    func request(_ number: Int, _ action: String, _ body: String) async throws {
        try await send(#"{"t":"d","d":{"r":\#(number),"a":"\#(action)","b":\#(body)}}"#)
    }

    /// The next frame the server wrote, waiting for it.
    func nextFrame() async throws -> Frame {
        while true {
            if let frame = takeFrame() { return frame }
            var buffer = try await channel.waitForOutboundWrite(as: ByteBuffer.self)
            written += buffer.readBytes(length: buffer.readableBytes) ?? []
        }
    }

    /// The next frame's text, which must be a final text frame.
    func nextText() async throws -> String {
        let frame = try await nextFrame()
        guard frame.fin, frame.opcode == 0x1 else { throw UnexpectedFrame(frame: frame) }
        return frame.text
    }

    struct UnexpectedFrame: Error {
        var frame: Frame
    }

    /// Completes once the channel has closed.
    func closed() async throws {
        try await channel.closeFuture.get()
    }

    /// Closes the channel if the server has not (the session then detaches from its namespace).
    func finish() async throws {
        _ = try await channel.finish(acceptAlreadyClosed: true)
    }

    /// A whole server frame (unmasked, RFC 6455 §5.2) from the front of `written`, if one is there.
    private func takeFrame() -> Frame? {
        guard written.count >= 2 else { return nil }
        var length = Int(written[1] & 0x7F)
        var start = 2
        if length == 126 {
            guard written.count >= 4 else { return nil }
            length = Int(written[2]) << 8 | Int(written[3])
            start = 4
        } else if length == 127 {
            guard written.count >= 10 else { return nil }
            length = written[2..<10].reduce(0) { $0 << 8 | Int($1) }
            start = 10
        }
        guard written.count >= start + length else { return nil }
        let frame = Frame(fin: written[0] & 0x80 != 0, opcode: written[0] & 0x0F, payload: Array(written[start..<start + length]))
        written.removeFirst(start + length)
        return frame
    }
}
