import Foundation

/// A three-server (by default) JetStream cluster on loopback with file storage in one temp
/// directory, routes between every pair, ready when each server reports healthy (meta leader known).
/// With `proxiedRoutes` every route goes through a `TCPProxy` of its own pair of servers, so a
/// test can cut one server off from its peers while its clients stay connected (`isolate`).
public final class NATSTestCluster: Sendable {
    /// The servers, in the order of their names n1, n2, n3.
    public let servers: [NATSTestServer]
    private let directory: URL
    /// With proxied routes: the proxy each server dials to reach each other one, by the two
    /// servers' indexes (from, to).
    private let routeProxies: [Pair: TCPProxy]

    private struct Pair: Hashable {
        var from: Int
        var to: Int
    }

    private init(servers: [NATSTestServer], directory: URL, routeProxies: [Pair: TCPProxy]) {
        self.servers = servers
        self.directory = directory
        self.routeProxies = routeProxies
    }

    /// Every client URL, for a client that should fail over.
    public var urls: [String] { servers.map(\.url) }

    /// The server with this name (as JetStream reports leaders), if any.
    public func server(named name: String) -> NATSTestServer? {
        servers.first { $0.name == name }
    }

    /// Starts the cluster and waits until every server is healthy. With `advertise` false the
    /// servers do not tell clients each other's URLs: a client reaches only the addresses it was
    /// given (a test that puts a proxy between a client and the servers needs this). With
    /// `launched` below `size` only the first servers run: a cluster still forming, whose
    /// others a test starts with `launch()`.
    /// `proxiedRoutes` puts a proxy on every route (see `isolate`). `executable` is the
    /// nats-server to run (default: the one on the PATH).
    public static func start(
        size: Int = 3, launched: Int? = nil, advertise: Bool = true, proxiedRoutes: Bool = false, executable: URL? = nil
    ) async throws(NATSTestingError) -> NATSTestCluster {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nats-cluster-\(UUID().uuidString)")
        let clusterName = "test-\(UUID().uuidString.prefix(8))"
        var clusterPorts: [Int] = []
        for _ in 0..<size { clusterPorts.append(try LoopbackPorts.free()) }
        var routeProxies: [Pair: TCPProxy] = [:]
        if proxiedRoutes {
            for from in 0..<size {
                for to in 0..<size where to != from {
                    do {
                        routeProxies[Pair(from: from, to: to)] = try await TCPProxy.start(forwardingTo: clusterPorts[to])
                    } catch {
                        for proxy in routeProxies.values { await proxy.close() }
                        throw NATSTestingError("cannot start a route proxy: \(error)")
                    }
                }
            }
        }
        var servers: [NATSTestServer] = []
        for index in 0..<size {
            let name = "n\(index + 1)"
            let routes = (0..<size).filter { $0 != index }.map { routeProxies[Pair(from: index, to: $0)]?.port ?? clusterPorts[$0] }
            servers.append(
                try NATSTestServer(
                    name: name, directory: directory.appendingPathComponent(name), clusterName: clusterName, clusterPort: clusterPorts[index],
                    routePorts: routes,
                    port: LoopbackPorts.free(), monitorPort: LoopbackPorts.free(), advertise: advertise,
                    // Peers told the real route address would connect to it around the proxies
                    // (implicit routes); told a closed port, they give up and keep the proxied one.
                    routeAdvertise: proxiedRoutes ? "127.0.0.1:1" : nil, executable: executable))
        }
        let cluster = NATSTestCluster(servers: servers, directory: directory, routeProxies: routeProxies)
        do {
            let running = servers.prefix(launched ?? size)
            for server in running { try await server.launch() }
            for server in running { try await server.waitUntilHealthy(timeout: .seconds(30)) }
        } catch {
            await cluster.shutdown()
            throw error
        }
        return cluster
    }

    /// Cuts `server` off from its peers (every route to or from it), its clients untouched: the
    /// server loses its JetStream peers while its clients still reach it. Needs `proxiedRoutes`.
    public func isolate(_ server: NATSTestServer) {
        for proxy in proxies(touching: server) { proxy.cut() }
    }

    /// Gives an isolated server its routes back.
    public func heal(_ server: NATSTestServer) {
        for proxy in proxies(touching: server) { proxy.restore() }
    }

    private func proxies(touching server: NATSTestServer) -> [TCPProxy] {
        guard let index = servers.firstIndex(where: { $0 === server }) else { return [] }
        return routeProxies.filter { $0.key.from == index || $0.key.to == index }.map(\.value)
    }

    /// Stops every server and removes the directory.
    public func shutdown() async {
        for server in servers { await server.stop() }
        for proxy in routeProxies.values { await proxy.close() }
        try? FileManager.default.removeItem(at: directory)
    }
}
