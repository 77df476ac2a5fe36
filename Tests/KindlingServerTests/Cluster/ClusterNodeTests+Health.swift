import KindlingServer
import KindlingTesting
import NATSTesting
import Synchronization
import Testing

/// A cluster node that lost NATS can neither acknowledge writes nor see others', so `/.ready`
/// refuses traffic until the connection is back.
extension ClusterNodeTests {
    @Test func aNodeIsNotReadyWhileItsNATSConnectionIsDown() async throws {
        try await Self.withNATS { nats in
            try await KindlingServer.run(Self.configuration(nats, node: "lonely")) { node in
                #expect(try await TestHTTPConnection.request(port: node.port, "GET", "/.ready").status == 200)
                for server in nats.servers { await server.kill() }
                try #require(
                    try await eventually(within: .seconds(10)) {
                        let ready = try await TestHTTPConnection.request(port: node.port, "GET", "/.ready")
                        return ready.status == 503 && ready.text.contains("NATS")
                    }, "not within 10 s")
                for server in nats.servers { try await server.launch() }
                for server in nats.servers { try await server.waitUntilHealthy(timeout: .seconds(40)) }
                // Ready again once it reconnected. The bounds are generous: this failed once on a
                // loaded CI run, at a step its output did not show.
                let last = Mutex("")
                try #require(
                    try await eventually(within: .seconds(40)) {
                        let ready = try await TestHTTPConnection.request(port: node.port, "GET", "/.ready")
                        last.withLock { $0 = "\(ready.status) \(ready.text)" }
                        return ready.status == 200
                    }, "not within 40 s; last answer: \(last.withLock { $0 })")
                // And it writes again. The namespace's first write waits while its join is
                // retried (up to 30 s, JetStream electing its leaders after the restart), so the
                // request may take that long before it is answered.
                try #require(
                    try await eventually(within: .seconds(45)) {
                        try await TestHTTPConnection.request(
                            port: node.port, "PUT", "/back.json?ns=health", body: "1", timeout: .seconds(40)
                        ).status == 200
                    }, "not within 45 s")
            }
        }
    }

    @Test func clusterMetricsCountLedNamespacesPublishesAndTheNATSConnection() async throws {
        try await Self.withNATS { nats in
            try await KindlingServer.run(Self.configuration(nats, node: "counted")) { node in
                for name in ["m1", "m2"] {
                    #expect(try await TestHTTPConnection.request(port: node.port, "PUT", "/x.json?ns=\(name)", body: "1").status == 200)
                }
                let text = try await TestHTTPConnection.request(port: node.port, "GET", "/.metrics").text
                let lines = text.split(separator: "\n").map(String.init)
                #expect(lines.contains("kindling_cluster_namespaces_led 2.0"), "\(lines.filter { $0.contains("cluster") })")
                #expect(lines.contains("kindling_cluster_nats_connected 1.0"))
                #expect(lines.contains("kindling_namespaces 2.0"))
                let published = lines.first { $0.hasPrefix("kindling_cluster_publish_seconds_count") }
                #expect(published.flatMap { $0.split(separator: " ").last }.flatMap { Int($0) } ?? 0 >= 2)
            }
        }
    }
}
