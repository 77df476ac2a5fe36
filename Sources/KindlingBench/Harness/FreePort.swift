import NIOCore
import NIOPosix

/// A loopback port nothing listens on right now (for servers that cannot report the port they
/// picked, such as redis-server).
public enum FreePort {
    public static func find() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        guard port > 0 else { throw BenchError.serverFailed("no free loopback port") }
        return port
    }
}
