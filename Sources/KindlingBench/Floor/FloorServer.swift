import NIOCore
import NIOPosix

/// The floor under any SwiftNIO WebSocket server's cost per request: `kindling-bench floor`
/// serves it for the harness and the lean probe (`FLOOR=1` with `scripts/redis-five-runs.sh` or
/// `scripts/lean-probe.sh`), so issue 16's rows can be read against what SwiftNIO's channel, the
/// runtime and the kernel cost with no database behind them.
///
/// It does per request what every such server must (read the frame where it arrived, unmask it,
/// answer, send a put's body to each listener as an event in one frame shared by all, each
/// connection written once per loop turn) and nothing else: no JSON parse, no tree, no log, no
/// fsync. One event loop, as `kindling serve` has on two cores. It trusts its client: it checks
/// nothing a server facing the world must (a frame over 16 MiB just stalls its connection).
/// Written by hand for Kindling's benchmarks.
public enum FloorServer {
    /// Listens on 127.0.0.1:`port` with one event loop of `group`, which serves every connection
    /// through `hub` (read it on that loop); with `directWrites`, each writes its socket itself
    /// (`FloorHandler`), and with `watchedReads` (Linux) also reads it itself when a
    /// `ReadinessWatcher` says it has bytes.
    public static func bind(
        port: Int, group: any EventLoopGroup, directWrites: Bool = false, watchedReads: Bool = false, hub: FloorHub = FloorHub()
    ) async throws -> any Channel {
        let loop = group.next()
        #if os(Linux)
        if watchedReads {
            hub.watcher = try ReadinessWatcher { tokens in loop.execute { hub.ready(tokens) } }
        }
        #endif
        let channel = try await ServerBootstrap(group: loop)
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(FloorHandler(hub: hub, directWrites: directWrites))
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        #if os(Linux)
        // The watcher's thread ends with the listener.
        if let watcher = hub.watcher { channel.closeFuture.whenComplete { _ in watcher.stop() } }
        #endif
        return channel
    }
}
