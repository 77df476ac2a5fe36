import NIOCore
import NIOPosix
import Synchronization

/// A bare TCP connection for the soak's hostile clients (and its REST probe): sends the bytes
/// given, and either never reads (its answers pile up at the server) or reads and keeps the
/// first few kilobytes.
final class SoakSocket: Sendable {
    private let channel: any Channel
    private let state: State

    final class State: Sendable {
        let closed = Atomic<Bool>(false)
        let head = Mutex<[UInt8]>([])
    }

    private init(channel: any Channel, state: State) {
        self.channel = channel
        self.state = state
    }

    static func connect(to target: BenchTarget, group: any EventLoopGroup, reading: Bool) async throws -> SoakSocket {
        let state = State()
        let channel = try await ClientBootstrap(group: group)
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .channelOption(ChannelOptions.socketOption(.so_rcvbuf), value: reading ? 65_536 : 4096)
            .channelOption(ChannelOptions.autoRead, value: reading)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Receiver(state: state)) }
            }
            .connect(host: target.host, port: target.port)
            .get()
        return SoakSocket(channel: channel, state: state)
    }

    func send(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes))
    }

    func send(_ text: String) async throws { try await send(Array(text.utf8)) }

    /// The connection ended (noticed by a read, or by a send that failed).
    var isClosed: Bool { state.closed.load(ordering: .relaxed) || !channel.isActive }

    /// The first bytes received (up to 16 KB).
    var received: String { String(decoding: state.head.withLock { $0 }, as: UTF8.self) }

    func close() { channel.close(promise: nil) }

    private final class Receiver: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let state: State

        init(state: State) { self.state = state }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            state.head.withLock { head in
                guard head.count < 16_384 else { return }
                head.append(contentsOf: buffer.readableBytesView.prefix(16_384 - head.count))
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            state.closed.store(true, ordering: .relaxed)
            context.fireChannelInactive()
        }
    }
}
