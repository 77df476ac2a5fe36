import KindlingServer
import KindlingTesting
import NATSTesting
import Testing

/// A cluster node that lost NATS can neither acknowledge writes nor see others', so `/.ready`
/// refuses traffic until the connection is back.
extension ClusterNodeTests {
    @Test func aNodeIsNotReadyWhileItsNATSConnectionIsDown() async throws {
        try await Self.withNATS { nats in
            try await KindlingServer.run(Self.configuration(nats, node: "lonely")) { node in
                #expect(try await TestHTTPConnection.request(port: node.port, "GET", "/.ready").status == 200)
                for server in nats.servers { server.kill() }
                try await Self.eventually(for: .seconds(10)) {
                    let ready = try await TestHTTPConnection.request(port: node.port, "GET", "/.ready")
                    return ready.status == 503 && ready.text.contains("NATS")
                }
                for server in nats.servers { try server.launch() }
                for server in nats.servers { try await server.waitUntilHealthy() }
                try await Self.eventually(for: .seconds(15)) {
                    try await TestHTTPConnection.request(port: node.port, "GET", "/.ready").status == 200
                }
                // And it writes again.
                try await Self.eventually(for: .seconds(30)) {
                    try await TestHTTPConnection.request(port: node.port, "PUT", "/back.json?ns=health", body: "1").status == 200
                }
            }
        }
    }
}
