import NIOCore
import NIOPosix
import Synchronization

/// A bare TCP connection for tests of what well-behaved clients never send: malformed or
/// unmasked WebSocket frames, headers a byte at a time, bodies that never finish, requests
/// whose answers are never read. It sends exactly the bytes given and keeps every byte
/// received.
public final class RawConnection: Sendable {
    private let channel: any Channel
    private let state: RawState

    private init(channel: any Channel, state: RawState) {
        self.channel = channel
        self.state = state
    }

    /// Connects to 127.0.0.1:`port`. A small `receiveBufferBytes` makes the kernel hold little
    /// for a connection that stops reading, so the server's backlog grows sooner. With
    /// `halfClosure` the connection stays open for sending once the server has closed its side
    /// (`isInputClosed`), as a client that sends its whole request before it reads: otherwise it
    /// closes as soon as the server's side ends.
    public static func connect(
        port: Int,
        receiveBufferBytes: Int? = nil,
        halfClosure: Bool = false,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> RawConnection {
        let state = RawState()
        var bootstrap = ClientBootstrap(group: group).channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .channelOption(ChannelOptions.allowRemoteHalfClosure, value: halfClosure)
        if let receiveBufferBytes {
            bootstrap = bootstrap.channelOption(ChannelOptions.socketOption(.so_rcvbuf), value: .init(receiveBufferBytes))
        }
        let channel =
            try await bootstrap
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(RawReceiver(state: state)) }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
        return RawConnection(channel: channel, state: state)
    }

    /// Sends bytes as they are; throws once the connection is closed.
    public func send(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes))
    }

    public func send(_ text: String) async throws {
        try await send(Array(text.utf8))
    }

    /// Every byte received so far.
    public var received: [UInt8] { state.bytes.withLock { $0 } }

    /// How many bytes were received so far.
    public var receivedCount: Int { state.count.withLock { $0 } }

    /// The received bytes as text (for HTTP responses).
    public var receivedText: String { String(decoding: received, as: UTF8.self) }

    /// Forgets what was received so far.
    public func clearReceived() { state.bytes.withLock { $0 = [] } }

    /// Stops reading, as a client that never reads its answers.
    public func pauseReading() {
        channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
    }

    /// Stops reading as soon as `bytes` in all have been received, on the connection's own
    /// event loop: unlike `pauseReading` from a test's task, which a busy machine may run only
    /// after the whole answer has been read, the pause comes at a known point.
    public func pauseReading(afterReceiving bytes: Int) {
        state.pauseAfter.withLock { $0 = bytes }
    }

    /// Reads again after `pauseReading`.
    public func resumeReading() {
        channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
        channel.read()
    }

    /// True once `text` has arrived (within `timeout`).
    public func waitFor(_ text: String, timeout: Duration = .seconds(10)) async -> Bool {
        let needle = Array(text.utf8)
        // Checked again once closed: the last bytes may have come with the close.
        _ = try? await eventually(within: timeout, every: .milliseconds(10)) { received.firstRange(of: needle) != nil || isInputClosed }
        return received.firstRange(of: needle) != nil
    }

    /// True once the server has closed the connection (within `timeout`).
    public func waitForClose(timeout: Duration = .seconds(10)) async -> Bool {
        _ = try? await eventually(within: timeout, every: .milliseconds(10)) { isClosed }
        return isClosed
    }

    /// True once the server has closed its side of the connection, or the whole connection has
    /// ended (within `timeout`).
    public func waitForInputClosed(timeout: Duration = .seconds(10)) async -> Bool {
        _ = try? await eventually(within: timeout, every: .milliseconds(10)) { isInputClosed }
        return isInputClosed
    }

    /// Whether the connection has ended.
    public var isClosed: Bool { state.closed.withLock { $0 } }

    /// Whether the server has closed its side (nothing more will arrive), or the connection has
    /// ended.
    public var isInputClosed: Bool { state.inputClosed.withLock { $0 } || isClosed }

    public func close() { channel.close(promise: nil) }

    /// Sends a WebSocket upgrade for `/.ws` and waits for the 101; the handshake response is
    /// then forgotten, so `received` holds only frames.
    public func upgradeToWebSocket(namespace: String = "test", headers: [(String, String)] = [], timeout: Duration = .seconds(10)) async throws {
        var request = "GET /.ws?v=5&ns=\(namespace) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        try await send(request + "\r\n")
        guard await waitFor("\r\n\r\n", timeout: timeout), receivedText.hasPrefix("HTTP/1.1 101") else {
            throw RawConnectionError.upgradeRefused(receivedText)
        }
        let end = received.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound ?? 0
        state.bytes.withLock { $0.removeSubrange(..<min(end, $0.count)) }
    }

    /// One client WebSocket frame (RFC 6455 §5.2): masked unless `masked` is false, with the
    /// given RSV bits (0 to 7) and any opcode, reserved ones included.
    public static func frame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true, masked: Bool = true, rsv: UInt8 = 0) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | ((rsv & 7) << 4) | (opcode & 0x0F)]
        let maskBit: UInt8 = masked ? 0x80 : 0
        switch payload.count {
        case ..<126:
            bytes.append(maskBit | UInt8(payload.count))
        case ..<65_536:
            bytes.append(maskBit | 126)
            bytes.append(contentsOf: [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)])
        default:
            bytes.append(maskBit | 127)
            bytes.append(contentsOf: (0..<8).reversed().map { UInt8((UInt64(payload.count) >> (8 * UInt64($0))) & 0xFF) })
        }
        guard masked else { return bytes + payload }
        let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        bytes.append(contentsOf: key)
        bytes.append(contentsOf: payload.enumerated().map { $0.element ^ key[$0.offset % 4] })
        return bytes
    }

    /// One frame the server sent.
    public struct Frame: Sendable {
        public let fin: Bool
        public let opcode: UInt8
        public let payload: ArraySlice<UInt8>
    }

    /// The whole frames received so far (the handshake's response is not kept, see
    /// `upgradeToWebSocket`); a frame still arriving, and anything after it, is left out.
    public var receivedFrames: [Frame] {
        var frames: [Frame] = []
        var bytes = received[...]
        while bytes.count >= 2 {
            var length = Int(bytes[bytes.startIndex + 1] & 0x7F)
            var header = 2
            if length == 126 {
                guard bytes.count >= 4 else { break }
                length = Int(bytes[bytes.startIndex + 2]) << 8 | Int(bytes[bytes.startIndex + 3])
                header = 4
            } else if length == 127 {
                guard bytes.count >= 10 else { break }
                // Eight bytes from the server: checked against what arrived before it is an Int,
                // so a length with its top bit set or near the maximum cannot trap.
                let declared = (2..<10).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[bytes.startIndex + $1]) }
                guard declared <= UInt64(bytes.count - 10) else { break }
                length = Int(declared)
                header = 10
            }
            guard bytes.count >= header + length else { break }
            let first = bytes[bytes.startIndex]
            let payloadStart = bytes.startIndex + header
            frames.append(Frame(fin: first & 0x80 != 0, opcode: first & 0x0F, payload: bytes[payloadStart..<(payloadStart + length)]))
            bytes = bytes.dropFirst(header + length)
        }
        return frames
    }

    /// The status code of the first close frame the server sent, if one has arrived.
    public var closeCode: Int? {
        guard let close = receivedFrames.first(where: { $0.opcode == 0x8 }), close.payload.count >= 2 else { return nil }
        return Int(close.payload[close.payload.startIndex]) << 8 | Int(close.payload[close.payload.startIndex + 1])
    }
}

public enum RawConnectionError: Error {
    case upgradeRefused(String)
}

/// What a raw connection received, shared with its handler.
private final class RawState: Sendable {
    let bytes = Mutex<[UInt8]>([])
    let count = Mutex(0)
    let closed = Mutex(false)
    let inputClosed = Mutex(false)
    let pauseAfter = Mutex<Int?>(nil)
}

private final class RawReceiver: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    let state: RawState

    init(state: RawState) { self.state = state }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        state.bytes.withLock { $0.append(contentsOf: buffer.readableBytesView) }
        let count = state.count.withLock { count in
            count += buffer.readableBytes
            return count
        }
        if let limit = state.pauseAfter.withLock({ $0 }), count >= limit {
            state.pauseAfter.withLock { $0 = nil }
            try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        state.closed.withLock { $0 = true }
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed = event as? ChannelEvent { state.inputClosed.withLock { $0 = true } }
        context.fireUserInboundEventTriggered(event)
    }
}
