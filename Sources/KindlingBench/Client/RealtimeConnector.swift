import KindlingWebSocketClient
import NIOCore
import NIOPosix

/// Opens lean realtime connections: the HTTP upgrade, then WebSocket frames straight into a
/// `RealtimeConnection` whose behaviour the caller makes on the connection's own event loop.
public struct RealtimeConnector: Sendable {
    public let target: BenchTarget
    public let group: any EventLoopGroup
    public let namespace: String

    public init(target: BenchTarget, group: any EventLoopGroup, namespace: String) {
        self.target = target
        self.group = group
        self.namespace = namespace
    }

    /// Connects (from `source` when given, an IPv4 address to bind to) and waits for the
    /// handshake. `makeBehaviour` runs on the connection's event loop.
    public func connect(
        from source: String? = nil,
        _ makeBehaviour: @escaping @Sendable (any EventLoop) -> any RealtimeBehaviour
    ) async throws -> RealtimeLink {
        let loop = group.next()
        let handshake = loop.makePromise(of: NIOLoopBound<RealtimeConnection>.self)
        let uri = "/.ws?v=5&ns=\(namespace)"
        let host = "\(target.host):\(target.port)"
        let channel: any Channel
        do {
            let bootstrap = try BenchBootstrap.make(on: loop, from: source)
            // The socket's bytes go straight to the connection, which finds the frames itself.
            channel = try await WebSocketClient.bootstrap(bootstrap, host: target.host, hostHeader: host, uri: uri, inbound: .bytes) { channel in
                let connection = RealtimeConnection(behaviour: makeBehaviour(channel.eventLoop), handshake: handshake, maxMessageBytes: 1 << 24)
                try channel.pipeline.syncOperations.addHandler(connection)
            }
            .connect(host: target.host, port: target.port)
            .get()
        } catch {
            // No connection will ever answer the handshake: fail it, or the promise leaks.
            handshake.fail(error)
            throw error
        }
        return RealtimeLink(channel: channel, connection: try await BenchBootstrap.ready(handshake.futureResult, on: channel))
    }
}
