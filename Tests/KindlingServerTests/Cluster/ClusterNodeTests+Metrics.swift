import Foundation
import KindlingCore
import KindlingTesting
import NATSTesting
import Testing

@testable import KindlingServer

/// `/.metrics` in a cluster: the node that decides a request counts it, once, under the action
/// its client asked for. (An extension, so these run in the serialized suite.)
extension ClusterNodeTests {
    @Test func theLeaderCountsAFollowersWritesUnderTheirClientsActions() async throws {
        try await Self.withNATS { nats in
            try await KindlingServer.run(Self.configuration(nats, node: "one")) { one in
                // The first node to open the namespace leads it.
                #expect(try await TestHTTPConnection.request(port: one.port, "PUT", "/opened.json?ns=counted", body: "true").status == 200)
                try await KindlingServer.run(Self.configuration(nats, node: "two")) { two in
                    let leaderBefore = try await MetricsEndpointTests.scrape(one.port)
                    let followerBefore = try await MetricsEndpointTests.scrape(two.port)
                    let watcher = try await TestClient.connect(port: two.port, namespace: "counted")
                    _ = try await watcher.request("q", try json(#"{"p":"/gone","h":""}"#))
                    let client = try await TestClient.connect(port: two.port, namespace: "counted")
                    #expect(try await client.request("p", try json(#"{"p":"/realtime","d":1}"#)).last?["d"]?["b"]?["s"]?.stringValue == "ok")
                    #expect(try await TestHTTPConnection.request(port: two.port, "PUT", "/rest.json?ns=counted", body: "2").status == 200)
                    #expect(try await client.request("o", try json(#"{"p":"/gone","d":true}"#)).last?["d"]?["b"]?["s"]?.stringValue == "ok")
                    await client.close()
                    // The leader runs the write, then this node commits it from the log.
                    let event = try await watcher.nextMessage()
                    #expect(event["d"]?["b"]?["d"] == .bool(true))
                    await watcher.close()

                    let leader = try await MetricsEndpointTests.scrape(one.port)
                    let follower = try await MetricsEndpointTests.scrape(two.port)
                    let requests = "kindling_requests_total"
                    #expect(MetricsEndpointTests.delta(leaderBefore, leader, requests, ["action": "set", "outcome": "ok"]) == 1)
                    #expect(MetricsEndpointTests.delta(leaderBefore, leader, requests, ["action": "rest_write", "outcome": "ok"]) == 1)
                    #expect(MetricsEndpointTests.delta(leaderBefore, leader, requests, ["action": "ondisconnect_set", "outcome": "ok"]) == 1)
                    // Counted once, by the node that decided them.
                    for action in ["set", "rest_write", "ondisconnect_set"] {
                        #expect(
                            (MetricsEndpointTests.delta(followerBefore, follower, requests, ["action": action, "outcome": "ok"]) ?? 0) == 0,
                            "\(action)")
                    }
                    #expect(MetricsEndpointTests.delta(followerBefore, follower, requests, ["action": "ondisconnect", "outcome": "ok"]) == 1)
                }
            }
        }
    }
}
