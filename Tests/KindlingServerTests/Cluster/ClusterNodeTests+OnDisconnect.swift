import Foundation
import KindlingCore
import KindlingServer
import KindlingTesting
import NATSTesting
import Testing

/// onDisconnect registrations made on a follower: checked against the rules there when queued,
/// and sent to the leader as writes, in order, when the connection closes.
/// (An extension, so these run in the serialized suite: one NATS cluster at a time.)
extension ClusterNodeTests {
    @Test func aFollowersClientsOnDisconnectWritesReachEveryNodeWhenItCloses() async throws {
        try await Self.withNATS { nats in
            try await KindlingServer.run(Self.configuration(nats, node: "one")) { one in
                #expect(try await TestHTTPConnection.request(port: one.port, "PUT", "/presence.json?ns=bye", body: #"{"alice":"online"}"#).status == 200)
                try await KindlingServer.run(Self.configuration(nats, node: "two")) { two in
                    try await KindlingServer.run(Self.configuration(nats, node: "three")) { three in
                        let watcher = try await TestClient.connect(port: three.port, namespace: "bye")
                        let initial = try await watcher.request("q", try json(#"{"p":"/presence","h":""}"#))
                        #expect(initial.first?["d"]?["b"]?["d"] == (try json(#"{"alice":"online"}"#)))
                        let leaving = try await TestClient.connect(port: two.port, namespace: "bye")
                        let registrations = [
                            ("o", #"{"p":"/presence/alice","d":"away"}"#),
                            ("o", #"{"p":"/presence/alice","d":"offline"}"#),
                            ("om", #"{"p":"/presence","d":{"seen":{".sv":"timestamp"}}}"#),
                            ("o", #"{"p":"/presence/cancelled","d":true}"#),
                            ("oc", #"{"p":"/presence/cancelled","d":null}"#),
                        ]
                        for (action, body) in registrations {
                            let replies = try await leaving.request(action, try json(body))
                            #expect(replies.last?["d"]?["b"]?["s"]?.stringValue == "ok", "\(action) \(body)")
                        }
                        // A registration the data rules refuse is refused when queued, on the follower.
                        let invalid = try await leaving.request("o", try json(#"{"p":"/presence/x","d":{".sv":"nonsense"}}"#))
                        #expect(invalid.last?["d"]?["b"]?["s"]?.stringValue != "ok")
                        let before = Date().timeIntervalSince1970 * 1000
                        await leaving.close()
                        // The leader runs the writes in order: the watcher on the third node sees
                        // "away", then "offline", then the timestamp.
                        let started = ContinuousClock.now
                        var seen: [JSONValue] = []
                        while seen.count < 3 {
                            let event = try await watcher.nextMessage()
                            seen.append(event["d"]?["b"]?["d"] ?? .null)
                        }
                        print("onDisconnect on a follower: the leader's writes seen on a third node \(ContinuousClock.now - started) after the close")
                        #expect(seen[0] == .string("away"))
                        #expect(seen[1] == .string("offline"))
                        for port in [one.port, two.port, three.port] {
                            let stored = try await TestHTTPConnection.request(port: port, "GET", "/presence.json?ns=bye").json()
                            #expect(stored["alice"] == .string("offline"), "node on port \(port): \(stored)")
                            #expect(stored["cancelled"] == nil)
                            let seenAt = try #require(stored["seen"]?.numberValue, "node on port \(port): \(stored)")
                            #expect(seenAt >= before.rounded(.down) - 1000)
                        }
                        await watcher.close()
                    }
                }
            }
        }
    }
}
