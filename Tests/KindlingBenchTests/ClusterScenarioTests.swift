import KindlingBench
import KindlingServer
import KindlingTesting
import Logging
import NATSTesting
import NIOPosix
import Testing

/// The scenarios that take several nodes, at a small size, against two Kindling nodes in cluster
/// mode on one JetStream server: every write reaches the subscribers of both nodes, and the
/// connections really went to both (each node opened the scenario's namespace).
@Suite("scenarios over cluster nodes", .serialized, .timeLimit(.minutes(2)))
struct ClusterScenarioTests {
    private let group = MultiThreadedEventLoopGroup.singleton

    /// Two cluster nodes on a fresh NATS server, for the body; everything is stopped afterwards.
    private func withTwoNodes(_ body: ([BenchTarget], [KindlingServer]) async throws -> Void) async throws {
        let nats = try await NATSTestServer.start()
        var logger = Logger(label: "kindling-bench-cluster-tests")
        logger.logLevel = .critical
        func configuration(_ node: String) -> ServerConfiguration {
            ServerConfiguration(port: 0, cluster: ClusterConfiguration(urls: [nats.url], nodeID: node, leaseTime: .seconds(3)), logger: logger)
        }
        do {
            try await KindlingServer.run(configuration("bench-a")) { first in
                try await KindlingServer.run(configuration("bench-b")) { second in
                    let targets = [first, second].map { BenchTarget(host: "127.0.0.1", port: $0.port) }
                    try await body(targets, [first, second])
                }
            }
        } catch {
            await nats.shutdown()
            throw error
        }
        await nats.shutdown()
    }

    /// True when every node opened a namespace whose name starts with `prefix`.
    private func everyNodeOpened(_ prefix: String, _ servers: [KindlingServer]) -> Bool {
        servers.allSatisfy { server in server.namespaces.contains { $0.hasPrefix(prefix) } }
    }

    @Test("fanout: the writer on one node, subscribers on both, every delivery counted")
    func fanout() async throws {
        try await withTwoNodes { targets, servers in
            let options = FanoutOptions(subscribers: 10, writes: 20, rate: 0, window: 4, padding: 4, progress: false)
            let report = try await FanoutScenario.run(kindling: targets, group: group, options: options)
            #expect(report.value("deliveries") == 200)
            #expect(report.value("writes acknowledged") == 20)
            #expect(report.parameters["nodes"] == "2")
            #expect(everyNodeOpened("fanout", servers))
        }
    }

    @Test("writes: writers on both nodes, the second node's forwarded, none refused")
    func writes() async throws {
        try await withTwoNodes { targets, servers in
            let options = WritesOptions(writers: 4, pipeline: 2, duration: .milliseconds(300), fsync: "cluster", progress: false)
            let report = try await WritesScenario.run(kindling: targets, group: group, options: options)
            let acknowledged = try #require(report.value("acknowledged writes"))
            #expect(acknowledged > 0)
            #expect(report.value("refused writes") == 0)
            #expect(report.latencies.first?.count == UInt64(acknowledged))
            #expect(everyNodeOpened("writes", servers))
        }
    }

    @Test("connections: spread over both nodes, each listening")
    func connections() async throws {
        try await withTwoNodes { targets, servers in
            let options = ConnectionsOptions(count: 20, sources: 2, listen: true, progress: false)
            let report = try await ConnectionsScenario.run(kindling: targets, group: group, options: options)
            #expect(report.value("connections open") == 20)
            #expect(report.value("refused listens") == 0)
            #expect(report.parameters["nodes"] == "2")
            #expect(everyNodeOpened("idle", servers))
            // Round robin: each node took its half of the 20 (warming both nodes alone would not).
            for server in servers { #expect(try await webSocketsOpened(server) >= 10) }
        }
    }

    /// `kindling_connections_opened_total{transport="websocket"}` on `server`'s `/.metrics`.
    private func webSocketsOpened(_ server: KindlingServer) async throws -> Int {
        let text = try await TestHTTPConnection.request(port: server.port, "GET", "/.metrics").text
        let prefix = #"kindling_connections_opened_total{transport="websocket"} "#
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(prefix) })
        return try #require(Int(line.dropFirst(prefix.count)))
    }
}
