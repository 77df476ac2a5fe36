import NIOCore
import NIOPosix

/// What `KindlingServer.start` has acquired so far, given back in one place when the start
/// fails (a cluster that cannot be reached, a log that does not recover, a port in use): the
/// event loops, the namespaces with their cluster connection, the worker threads. Filled in as
/// the start goes, and used by that one start only.
final class ServerStartCleanup {
    private let group: MultiThreadedEventLoopGroup
    var registry: NamespaceRegistry?
    var workers: NIOThreadPool?

    init(group: MultiThreadedEventLoopGroup) {
        self.group = group
    }

    /// Gives back everything acquired, the cluster's namespaces first (they hold leases other
    /// nodes would otherwise wait out).
    func run() async {
        await registry?.leaveCluster()
        try? await group.shutdownGracefully()
        try? await workers?.shutdownGracefully()
    }
}
