import KindlingCore
import KindlingProtocol
import KindlingWebSocketClient
import NIOCore
import NIOPosix
import NIOSSL
import NIOWebSocket
import Synchronization

/// A small realtime-protocol client over a real socket, for integration tests: it speaks the
/// wire exactly (envelopes, request numbers, split frames) and lets a test see every message in
/// the order it arrived.
public final class TestClient: Sendable {
    /// The handshake the server sent.
    public let handshake: JSONValue
    private let channel: any Channel
    private let inbox: Inbox
    private let requestNumber = Mutex(0)

    private init(channel: any Channel, inbox: Inbox, handshake: JSONValue) {
        self.channel = channel
        self.inbox = inbox
        self.handshake = handshake
    }

    /// Connects to `/.ws` (with `?v=5&ns=namespace` unless `namespace` is nil, and `&ls=` the
    /// session id of an earlier connection, as the SDKs send it when they reconnect, and `&s=`
    /// the long-polling session a browser's WebSocket takes over) and waits for the first
    /// message (the handshake; `a` when taking a session over); with `tls`, over `wss://` (the server's certificate checked against `host`).
    public static func connect(
        port: Int,
        namespace: String? = "test",
        lastSession: String? = nil,
        transportSession: String? = nil,
        host: String = "127.0.0.1",
        hostHeader: String? = nil,
        receiveBufferBytes: Int? = nil,
        tls: TLSConfiguration? = nil,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> TestClient {
        let tlsContext = try tls.map { try NIOSSLContext(configuration: $0) }
        let inbox = Inbox()
        let uri =
            "/.ws?v=5" + (namespace.map { "&ns=\($0)" } ?? "") + (lastSession.map { "&ls=\($0)" } ?? "") + (transportSession.map { "&s=\($0)" } ?? "")
        let headerHost = hostHeader ?? "\(host):\(port)"
        var bootstrap = ClientBootstrap(group: group).channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
        if let receiveBufferBytes {
            bootstrap = bootstrap.channelOption(ChannelOptions.socketOption(.so_rcvbuf), value: .init(receiveBufferBytes))
        }
        let channel = try await WebSocketClient.bootstrap(
            bootstrap, host: host, hostHeader: headerHost, uri: uri, tls: tlsContext
        ) { channel in
            try channel.pipeline.syncOperations.addHandler(FrameReceiver(inbox: inbox))
        }
        .connect(host: host, port: port)
        .get()
        let first = try await inbox.next(timeout: .seconds(10))
        return TestClient(channel: channel, inbox: inbox, handshake: try JSONParser.parse(first))
    }

    /// Sends one raw text frame, exactly as given.
    public func sendFrame(_ text: String) async throws {
        var buffer = channel.allocator.buffer(capacity: text.utf8.count)
        buffer.writeString(text)
        let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: buffer)
        try await channel.writeAndFlush(frame)
    }

    /// Sends one text message cut into `pieces` WebSocket frames (a first text frame, then
    /// continuation frames), as a client library may fragment it.
    public func sendFragmented(_ text: String, pieces: Int) async throws {
        let bytes = Array(text.utf8)
        let size = (bytes.count + pieces - 1) / pieces
        for (index, start) in stride(from: 0, to: bytes.count, by: size).enumerated() {
            let piece = ByteBuffer(bytes: bytes[start..<min(start + size, bytes.count)])
            let last = start + size >= bytes.count
            let frame = WebSocketFrame(fin: last, opcode: index == 0 ? .text : .continuation, maskKey: .random(), data: piece)
            try await channel.writeAndFlush(frame)
        }
    }

    /// Sends a continuation frame on its own (a protocol error when no message is under way).
    public func sendContinuation(_ text: String) async throws {
        let frame = WebSocketFrame(fin: true, opcode: .continuation, maskKey: .random(), data: ByteBuffer(string: text))
        try await channel.writeAndFlush(frame)
    }

    /// Sends a message the way the SDKs do: one frame, or a count frame then 16,384-unit pieces
    /// when it is longer.
    public func send(_ message: String) async throws {
        for frame in FrameSplitter.frames(Array(message.utf8), measuring: .utf16Units) {
            let data = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(bytes: frame))
            try await channel.writeAndFlush(data)
        }
    }

    /// Sends a data request and returns its number.
    @discardableResult
    public func sendRequest(_ action: String, _ body: JSONValue) async throws -> Int {
        let number = requestNumber.withLock { value in
            value += 1
            return value
        }
        try await send(ClientMessage.request(number: number, action: action, body: body))
        return number
    }

    /// Sends a typed request, encoded by the protocol target as the SDK encodes it, and returns
    /// every message up to and including its response.
    public func request(_ action: Action, timeout: Duration = .seconds(10)) async throws -> [JSONValue] {
        try await request(action.wireName, action.wireBody, timeout: timeout)
    }

    /// The next message, decoded as a client reads it.
    public func nextEnvelope(timeout: Duration = .seconds(10)) async throws -> ServerEnvelope {
        try ServerEnvelope.decode(try await inbox.next(timeout: timeout))
    }

    /// Sends a request and returns every message received up to and including its response
    /// (so a test can check what arrived before the `ok`).
    public func request(_ action: String, _ body: JSONValue, timeout: Duration = .seconds(10)) async throws -> [JSONValue] {
        let number = try await sendRequest(action, body)
        var messages: [JSONValue] = []
        while true {
            let message = try await nextMessage(timeout: timeout)
            messages.append(message)
            if message["d"]?["r"]?.numberValue == Double(number) { return messages }
        }
    }

    /// The next message, reassembled from split frames.
    ///
    /// Never inlined: inlined into `request`, its typed-throwing parse crashed Swift 6.3.1's
    /// optimizer (signal 11 splitting the coroutine), and `swift build -c release` failed.
    @inline(never)
    public func nextMessage(timeout: Duration = .seconds(10)) async throws -> JSONValue {
        try JSONParser.parse(try await inbox.next(timeout: timeout))
    }

    /// The next raw frame text as received.
    public func nextRawMessage(timeout: Duration = .seconds(10)) async throws -> String {
        try await inbox.next(timeout: timeout)
    }

    /// True when no message arrives within `timeout` (a message that does arrive is consumed).
    public func isQuiet(for timeout: Duration = .milliseconds(200)) async -> Bool {
        (try? await inbox.next(timeout: timeout)) == nil
    }

    /// Every frame received so far, as sent (count headers and pieces included).
    public func receivedFrames() -> [String] { inbox.frames() }

    /// Stops reading from the socket, as a stalled client would; the server's writes back up.
    public func pauseReading() {
        channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
    }

    /// Reads again after `pauseReading`.
    public func resumeReading() {
        channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
        channel.read()
    }

    /// Ends the connection with a close frame.
    public func close() async {
        var data = channel.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: .normalClosure)
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: data)
        try? await channel.writeAndFlush(frame)
        try? await channel.close()
    }

    /// Drops the TCP connection without a close frame, as a crashed client would.
    public func abort() async {
        try? await channel.close()
    }

    /// True once the server has closed the connection.
    public func waitForClose(timeout: Duration = .seconds(10)) async -> Bool {
        await inbox.waitForClose(timeout: timeout)
    }
}

/// Every frame received, and the messages they make (joined by `FrameAssembler`), handed to
/// the test in order.
final class Inbox: Sendable {
    private struct Received {
        var assembler = FrameAssembler(maxMessageBytes: 1 << 28)
        var frames: [String] = []
        var closed = false
    }

    private let received = Mutex(Received())
    private let messages = AsyncQueue<String>()

    /// Called on the event loop only, so messages are queued in the order their frames came.
    func receive(_ frame: String) {
        let message: String? = received.withLock { state in
            state.frames.append(frame)
            guard case .message(let message)? = try? state.assembler.receive(frame) else { return nil }
            return message
        }
        if let message { messages.push(message) }
    }

    func frames() -> [String] { received.withLock { $0.frames } }

    func close() {
        received.withLock { $0.closed = true }
        messages.finish()
    }

    /// The next message; throws when none comes within `timeout` or the connection closed.
    func next(timeout: Duration) async throws -> String {
        guard let message = await messages.next(timeout: timeout) else { throw TestClientError.timedOut }
        return message
    }

    func waitForClose(timeout: Duration) async -> Bool {
        (try? await eventually(within: timeout, every: .milliseconds(10)) { received.withLock { $0.closed } }) ?? false
    }
}

/// Why a test client call failed.
public enum TestClientError: Error {
    case timedOut
    /// The server answered what a client does not expect (said how).
    case unexpected(String)
}

/// Feeds text frames to the inbox; notes when the connection ends.
private final class FrameReceiver: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame

    let inbox: Inbox

    init(inbox: Inbox) { self.inbox = inbox }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if frame.opcode == .text { inbox.receive(String(buffer: frame.unmaskedData)) }
        if frame.opcode == .connectionClose { inbox.close() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        inbox.close()
        context.fireChannelInactive()
    }
}
