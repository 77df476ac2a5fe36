import Foundation
import KindlingCore
@testable import KindlingServer
import KindlingTesting
import Logging
import NATSTesting
import Testing

/// `--require-fsync` (ClusterConfiguration.requireFsync): a node starts only on NATS servers
/// whose monitoring port says they fsync each write before acknowledging it. Run against the
/// recent nats-server that scripts/setup.sh pins (Debian's 2.9 does not take
/// `sync_interval`). (An extension, so it runs in the serialized suite.)
extension ClusterFaultTests {
    static func requiringFsync(_ server: NATSTestServer, node: String) -> ServerConfiguration {
        var configuration = configuration(urls: [server.url], node: node)
        configuration.cluster?.requireFsync = true
        configuration.cluster?.natsMonitorPort = server.monitorPort
        return configuration
    }

    @Test func aNodeRequiringFsyncStartsOnServersThatSyncAlways() async throws {
        let server = try await NATSTestServer.start(executable: NATSTestServer.recentExecutable(), syncAlways: true)
        do {
            try await KindlingServer.run(Self.requiringFsync(server, node: "durable")) { node in
                // A PUT is idempotent: a machine stalled past the 3 s lease mid-write (a CI
                // run froze every test for a minute) answers it "may or may not be stored"
                // (504), or "nothing was written" (503) when the lease lapsed before it went
                // out, by design, so it is sent again; the node must then acknowledge it.
                var put = try await TestHTTPConnection.request(port: node.port, "PUT", "/v.json?ns=fsync", body: "1")
                for _ in 1...5 where put.status == 504 || put.status == 503 {
                    put = try await TestHTTPConnection.request(port: node.port, "PUT", "/v.json?ns=fsync", body: "1")
                }
                #expect(put.status == 200, "\(put.status) \(put.text)")
            }
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    @Test func aNodeRequiringFsyncRefusesServersThatAcknowledgeBeforeSyncing() async throws {
        let server = try await NATSTestServer.start(executable: NATSTestServer.recentExecutable(), syncAlways: false)
        let refusal = await #expect(throws: ClusterError.self) { _ = try await KindlingServer.start(Self.requiringFsync(server, node: "lax")) }
        #expect(refusal.map { "\($0)" }?.contains("acknowledges writes before it fsyncs them") == true, "\(String(describing: refusal))")
        // A monitoring port that does not answer confirms nothing either.
        var unreachable = Self.requiringFsync(server, node: "blind")
        unreachable.cluster?.natsMonitorPort = 1
        let blind = await #expect(throws: ClusterError.self) { _ = try await KindlingServer.start(unreachable) }
        #expect(blind.map { "\($0)" }?.contains("could be asked on their monitoring port") == true, "\(String(describing: blind))")
        await server.shutdown()
    }
}
