import Foundation
import KindlingCore
import KindlingServer
import KindlingTesting
import Logging
import NATSClient
import NATSTesting
import Testing

/// A leader killed with SIGKILL (a real `kindling serve --cluster` process): its lease expires,
/// a follower takes the namespace over after reading the log to its end, and every write the
/// dead leader acknowledged is still there.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ClusterFailoverTests {
    @Test func aFollowerTakesOverFromAKilledLeaderWithEveryAcknowledgedWrite() async throws {
        try await ClusterNodeTests.withNATS { nats in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kindling-cluster-\(UUID().uuidString)").path
            let leader = try await ServerProcess.start(
                dataDirectory: directory, arguments: ["--cluster", nats.urls.joined(separator: ","), "--node-id", "doomed", "--lease-seconds", "1"])
            var acknowledged: [Int] = []
            for index in 0..<20 {
                let put = try await TestHTTPConnection.request(port: leader.port, "PUT", "/w/k\(index).json?ns=failover", body: "\(index)")
                if put.status == 200 { acknowledged.append(index) }
            }
            #expect(acknowledged.count == 20)
            try await KindlingServer.run(ClusterNodeTests.configuration(nats, node: "heir", leaseTime: .seconds(1))) { heir in
                let listener = try await TestClient.connect(port: heir.port, namespace: "failover")
                let initial = try await listener.request("q", try JSONParser.parse(#"{"p":"/w","h":""}"#))
                #expect(initial.first?["d"]?["b"]?["d"]?["k19"] == .number(19))
                // A write on the follower while the leader lives goes to the leader.
                #expect(try await TestHTTPConnection.request(port: heir.port, "PUT", "/w/k20.json?ns=failover", body: "20").status == 200)
                acknowledged.append(20)
                _ = try await listener.nextMessage()
                leader.kill()
                let killed = ContinuousClock.now
                var resumed: Duration?
                while ContinuousClock.now - killed < .seconds(15) {
                    let put = try await TestHTTPConnection.request(port: heir.port, "PUT", "/w/k21.json?ns=failover", body: "21")
                    if put.status == 200 {
                        resumed = ContinuousClock.now - killed
                        break
                    }
                    #expect(put.status == 503)
                    try await Task.sleep(for: .milliseconds(100))
                }
                let took = try #require(resumed)
                acknowledged.append(21)
                // Within the lease time (1 s) plus the key-value expiry's granularity and catch-up.
                #expect(took < .seconds(8))
                let read = try await TestHTTPConnection.request(port: heir.port, "GET", "/w.json?ns=failover")
                let stored = try read.json()
                for index in acknowledged { #expect(stored["k\(index)"] == .number(Double(index))) }
                // The listener on the new leader saw the write made after the take-over once.
                #expect(try await listener.nextMessage()["d"]?["b"]?["d"] == .number(21))
                let (client, js) = try await ClusterNodeTests.jetStream(nats)
                let lease = try await js.keyValue("kindling_leases").get("failover")
                #expect(lease.map { String(decoding: $0.value, as: UTF8.self) } == "heir")
                await client.close()
                print("failover: writes resumed \(took) after SIGKILL of the leader (lease 1 s)")
                await listener.close()
            }
            try? FileManager.default.removeItem(atPath: directory)
        }
    }
}
