import NIOCore
import NIOPosix

/// The harness's client connections, for either protocol: one event loop, no Nagle delay, and
/// optionally a source address (to spread thousands of connections over 127.0.0.x).
enum BenchBootstrap {
    /// A bootstrap on `loop`, bound to `source` (an IPv4 address) when given.
    static func make(on loop: any EventLoop, from source: String?) throws -> ClientBootstrap {
        let bootstrap = ClientBootstrap(group: loop)
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(30))
        guard let source else { return bootstrap }
        return bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0))
    }

    /// Waits until the connection on `channel` is ready; closes the channel when it never is.
    static func ready<Connection: Sendable>(_ opened: EventLoopFuture<Connection>, on channel: any Channel) async throws -> Connection {
        do {
            return try await opened.get()
        } catch {
            try? await channel.close()
            throw error
        }
    }
}
