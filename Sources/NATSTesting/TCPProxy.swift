import NIOCore
import NIOPosix
import Synchronization

/// A TCP forwarder on loopback between clients and one server, which a test can cut to make a
/// network partition: `cut` closes every forwarded connection on both sides and closes each
/// new one as soon as it is accepted, until `restore`. A client given only the proxy's address
/// (and a server that does not advertise other addresses) is then cut off from that server.
/// `stall` is the other kind of partition: the connections stay open but nothing crosses them
/// (what is sent waits in the socket buffers) until `restore`, when it all arrives late.
public final class TCPProxy: Sendable {
    private struct State {
        var isCut = false
        var isStalled = false
        /// The open connections, both sides, by their identity.
        var channels: [ObjectIdentifier: any Channel] = [:]
    }

    /// The port clients connect to.
    public let port: Int
    private let listener: any Channel
    private let state: Mutex<State>

    private init(listener: any Channel, port: Int) {
        self.listener = listener
        self.port = port
        self.state = Mutex(State())
    }

    /// Listens on a free loopback port and forwards each connection to `targetPort`.
    public static func start(forwardingTo targetPort: Int) async throws -> TCPProxy {
        let registry = Registry()
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.autoRead, value: false)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { inbound in
                inbound.eventLoop.makeCompletedFuture {
                    try inbound.pipeline.syncOperations.addHandler(Connector(registry: registry, targetPort: targetPort))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = listener.localAddress?.port else {
            try await listener.close()
            throw ChannelError.unknownLocalAddress
        }
        let proxy = TCPProxy(listener: listener, port: port)
        registry.set(proxy)
        return proxy
    }

    /// What a forwarder does with bytes it has just read: `cut` and `stall` take effect at once
    /// for bytes read after they return, though closing the connections or stopping their reads
    /// runs later on their event loops (with the test process busy, bytes read in between
    /// crossed a link already cut).
    fileprivate enum Passage { case forward, hold, drop }

    fileprivate var passage: Passage {
        state.withLock { state in state.isCut ? .drop : state.isStalled ? .hold : .forward }
    }

    /// Remembers a new connection's side until it closes; false (and nothing kept) while cut.
    fileprivate func track(_ channel: any Channel) -> Bool {
        let id = ObjectIdentifier(channel)
        let admitted = state.withLock { state -> Bool in
            guard !state.isCut, !state.isStalled else { return false }
            state.channels[id] = channel
            return true
        }
        if admitted { channel.closeFuture.whenComplete { [self] _ in _ = state.withLock { $0.channels.removeValue(forKey: id) } } }
        return admitted
    }

    /// Cuts the link: every forwarded connection is closed on both sides, and new ones are
    /// closed as they are accepted.
    public func cut() {
        let open = state.withLock { state -> [any Channel] in
            state.isCut = true
            defer { state.channels = [:] }
            return Array(state.channels.values)
        }
        for channel in open { channel.close(promise: nil) }
    }

    /// Stops forwarding without closing anything: both sides of every connection stop being
    /// read. New connections are closed as they are accepted, as when cut.
    public func stall() {
        let open = state.withLock { state -> [any Channel] in
            state.isStalled = true
            return Array(state.channels.values)
        }
        for channel in open { channel.setOption(.autoRead, value: false).whenComplete { _ in } }
    }

    /// Forwards again: new connections, and what stalled ones held back.
    public func restore() {
        let open = state.withLock { state -> [any Channel] in
            state.isCut = false
            defer { state.isStalled = false }
            return state.isStalled ? Array(state.channels.values) : []
        }
        for channel in open {
            channel.pipeline.fireUserInboundEventTriggered(Forwarder.Release())
            channel.setOption(.autoRead, value: true).whenComplete { _ in channel.read() }
        }
    }

    /// Cuts every connection and stops listening.
    public func close() async {
        cut()
        try? await listener.close()
    }
}

/// Hands the proxy to the accept handler, which is built before the proxy exists.
private final class Registry: Sendable {
    private let stored = Mutex<TCPProxy?>(nil)

    var proxy: TCPProxy? { stored.withLock { $0 } }

    func set(_ proxy: TCPProxy) { stored.withLock { $0 = proxy } }
}

/// Connects an accepted connection to the server once it is active, then forwards both ways
/// (the accepted side reads only from then on, so nothing it sends is lost).
private final class Connector: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let registry: Registry
    private let targetPort: Int

    init(registry: Registry, targetPort: Int) {
        self.registry = registry
        self.targetPort = targetPort
    }

    func channelActive(context: ChannelHandlerContext) {
        let inbound = context.channel
        guard let proxy = registry.proxy, proxy.track(inbound) else {
            context.close(promise: nil)
            return
        }
        ClientBootstrap(group: context.eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { outbound in
                outbound.eventLoop.makeCompletedFuture {
                    try outbound.pipeline.syncOperations.addHandler(Forwarder(peer: inbound, proxy: proxy))
                }
            }
            .connect(host: "127.0.0.1", port: targetPort)
            .whenComplete { result in
                // On the accepted connection's event loop, which the bootstrap used.
                guard case .success(let outbound) = result, proxy.track(outbound) else {
                    if case .success(let outbound) = result { outbound.close(promise: nil) }
                    inbound.close(promise: nil)
                    return
                }
                do {
                    try inbound.pipeline.syncOperations.addHandler(Forwarder(peer: outbound, proxy: proxy))
                    inbound.setOption(.autoRead, value: true).whenComplete { _ in inbound.read() }
                } catch {
                    outbound.close(promise: nil)
                    inbound.close(promise: nil)
                }
            }
        context.fireChannelActive()
    }
}

/// Writes what one side reads to the other side, and closes the other side when this one ends.
/// What it reads once the link is cut is dropped; what it reads while stalled is held, and
/// written first when the link is restored.
private final class Forwarder: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    /// Sent through the pipeline by `restore`: the held bytes go out.
    struct Release {}

    private let peer: any Channel
    private let proxy: TCPProxy
    private var held: [ByteBuffer] = []

    init(peer: any Channel, proxy: TCPProxy) {
        self.peer = peer
        self.proxy = proxy
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch proxy.passage {
        case .drop:
            held = []
        case .hold:
            held.append(unwrapInboundIn(data))
        case .forward:
            release()
            peer.write(unwrapInboundIn(data), promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        peer.flush()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is Release else { return context.fireUserInboundEventTriggered(event) }
        guard proxy.passage == .forward else { return }
        release()
        peer.flush()
    }

    private func release() {
        for bytes in held { peer.write(bytes, promise: nil) }
        held = []
    }

    func channelInactive(context: ChannelHandlerContext) {
        peer.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
