import Foundation

/// A three-server (by default) JetStream cluster on loopback with file storage in one temp
/// directory, routes between every pair, ready when each server reports healthy (meta leader known).
public final class NATSTestCluster: Sendable {
    /// The servers, in the order of their names n1, n2, n3.
    public let servers: [NATSTestServer]
    private let directory: URL

    private init(servers: [NATSTestServer], directory: URL) {
        self.servers = servers
        self.directory = directory
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
    public static func start(size: Int = 3, launched: Int? = nil, advertise: Bool = true) async throws(NATSTestingError) -> NATSTestCluster {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nats-cluster-\(UUID().uuidString)")
        let clusterName = "test-\(UUID().uuidString.prefix(8))"
        var clusterPorts: [Int] = []
        for _ in 0..<size { clusterPorts.append(try LoopbackPorts.free()) }
        var servers: [NATSTestServer] = []
        for index in 0..<size {
            let name = "n\(index + 1)"
            let routes = clusterPorts.enumerated().filter { $0.offset != index }.map(\.element)
            servers.append(
                try NATSTestServer(
                    name: name, directory: directory.appendingPathComponent(name), clusterName: clusterName, clusterPort: clusterPorts[index],
                    routePorts: routes,
                    port: LoopbackPorts.free(), monitorPort: LoopbackPorts.free(), advertise: advertise))
        }
        let cluster = NATSTestCluster(servers: servers, directory: directory)
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

    /// Stops every server and removes the directory.
    public func shutdown() async {
        for server in servers { await server.stop() }
        try? FileManager.default.removeItem(at: directory)
    }
}
