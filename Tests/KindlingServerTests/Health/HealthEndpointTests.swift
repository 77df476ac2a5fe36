import Foundation
import KindlingCore
import KindlingTesting
import Testing

@testable import KindlingServer

/// `GET /.health` and `GET /.ready`: no credential needed, even under locked rules; readiness
/// follows storage and shutdown.
@Suite(.timeLimit(.minutes(2)))
struct HealthEndpointTests {
    @Test func healthAndReadinessAnswerWithoutCredentials() async throws {
        let configuration = ServerConfiguration(port: 0, auth: .unconfigured(onLoopback: false), allowOpen: false)
        try await KindlingServer.run(configuration) { server in
            let health = try await TestHTTPConnection.request(port: server.port, "GET", "/.health")
            #expect(health.status == 200)
            #expect(health.text == #"{"status":"ok"}"#)
            let ready = try await TestHTTPConnection.request(port: server.port, "GET", "/.ready")
            #expect(ready.status == 200)
            #expect(ready.text == #"{"status":"ok"}"#)
            let posted = try await TestHTTPConnection.request(port: server.port, "POST", "/.ready", body: "{}")
            #expect(posted.status == 405)
            // A bad credential is not even looked at.
            let withToken = try await TestHTTPConnection.request(port: server.port, "GET", "/.health?auth=garbage")
            #expect(withToken.status == 200)
        }
    }

    @Test func readinessIsRefusedWhileDrainingOrWhileALogFails() {
        let metrics = ServerMetrics(topNamespaces: 1)
        let health = ServerHealth(metrics: metrics)
        #expect(health.notReadyReason == nil)
        metrics.logFailing(true)
        #expect(health.notReadyReason?.contains("disk") == true)
        metrics.logFailing(false)
        #expect(health.notReadyReason == nil)
        health.startDraining()
        #expect(health.notReadyReason == "shutting down")
    }
}
