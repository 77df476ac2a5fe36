import Foundation
import KindlingCore
import KindlingServer
import KindlingTesting
import NATSClient
import NATSTesting
import Testing

/// onDisconnect registrations made on a follower: checked against the rules there when queued,
/// and sent to the leader as writes, in order, when the connection closes.
/// (An extension, so these run in the serialized suite: one NATS cluster at a time.)
extension ClusterNodeTests {
    @Test func aFollowersClientsOnDisconnectWritesReachEveryNodeWhenItCloses() async throws {
        try await Self.withNATS { nats in
            try await KindlingServer.run(Self.configuration(nats, node: "one")) { one in
                #expect(
                    try await TestHTTPConnection.request(port: one.port, "PUT", "/presence.json?ns=bye", body: #"{"alice":"online"}"#).status == 200)
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
                        // The leader runs the writes in order; "offline" replaced "away" when it was
                        // queued for the same location, so the watcher on the third node sees
                        // "offline", then the timestamp.
                        let started = ContinuousClock.now
                        var seen: [JSONValue] = []
                        while seen.count < 2 {
                            let event = try await watcher.nextMessage()
                            seen.append(event["d"]?["b"]?["d"] ?? .null)
                        }
                        print("onDisconnect on a follower: the leader's writes seen on a third node \(ContinuousClock.now - started) after the close")
                        #expect(seen[0] == .string("offline"))
                        #expect(seen[1]["seen"]?.numberValue != nil, "\(seen[1])")
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

    @Test func theLeaderRunsTheRegistrationsOfAKilledNodesConnection() async throws {
        try await Self.withNATS { nats in
            try await KindlingServer.run(Self.configuration(nats, node: "leader", leaseTime: .seconds(1))) { leader in
                #expect(
                    try await TestHTTPConnection.request(port: leader.port, "PUT", "/presence.json?ns=crash", body: #"{"alice":"online"}"#).status
                        == 200)
                let directory = ClusterScratchDirectory()
                let mortal = try await Self.startNodeProcess(nats, node: "mortal", dataDirectory: directory)
                let client = try await TestClient.connect(port: mortal.port, namespace: "crash")
                let registrations = [
                    ("o", #"{"p":"/presence/alice","d":"crashed"}"#),
                    ("om", #"{"p":"/presence","d":{"runs":{".sv":{"increment":1}}}}"#),
                    ("o", #"{"p":"/presence/cancelled","d":true}"#),
                    ("oc", #"{"p":"/presence/cancelled","d":null}"#),
                ]
                for (action, body) in registrations {
                    let replies = try await client.request(action, try json(body))
                    #expect(replies.last?["d"]?["b"]?["s"]?.stringValue == "ok", "\(action): \(mortal.errorOutput)")
                }
                // The node keeps them in NATS right after their ok: one put per message (the
                // last holds the cancel, so the kill waits for it).
                let (nc, js) = try await Self.jetStream(nats)
                var stored: UInt64 = 0
                try await eventually(within: .seconds(10), every: .milliseconds(50)) {
                    stored = (try? await js.streamInfo("KV_kindling_ondisconnect").state.lastSequence) ?? 0
                    return stored >= 4
                }
                #expect(stored >= 4)
                await mortal.kill()
                let killed = ContinuousClock.now
                // Restarted at once with the same id: a new member, so its earlier process's
                // registrations are still run once that one's liveness key expires.
                let reborn = try await Self.startNodeProcess(nats, node: "mortal", dataDirectory: directory)
                var ran: Duration?
                try await eventually(within: .seconds(20) - (ContinuousClock.now - killed), every: .milliseconds(100)) {
                    let data = try await TestHTTPConnection.request(port: leader.port, "GET", "/presence.json?ns=crash").json()
                    guard data["alice"] == .string("crashed") else { return false }
                    ran = ContinuousClock.now - killed
                    #expect(data["cancelled"] == nil)
                    return true
                }
                // Where it stood, for a failure's message: who leads the namespace, and what is
                // left of the registrations.
                var standing = ""
                if ran == nil {
                    let holder = try? await Self.leaseHolder(Self.leases(js), of: "crash")
                    let left = try? await js.streamInfo("KV_kindling_ondisconnect").state.messages
                    standing = "the lease held by \(holder ?? "nobody"), \(left.map(String.init) ?? "?") registration messages kept; "
                }
                let took = try #require(ran, "never ran within 20 s; \(standing)\(mortal.errorOutput)")
                print("onDisconnect of a killed node: run by the leader \(took) after SIGKILL (lease 1 s)")
                // Lease time (1 s), the next sweep (1 s) and the bucket's read, with a margin.
                #expect(took < .seconds(10))
                // Run once: after more sweeps, the increment was made one time. A deliberate
                // window (three sweeps) in which it must NOT run again.
                try await Task.sleep(for: .seconds(3))
                let after = try await TestHTTPConnection.request(port: leader.port, "GET", "/presence.json?ns=crash").json()
                #expect(after["runs"] == .number(1))
                // The sweeps purged the keys' delete markers: the bucket is empty again.
                var left: UInt64 = .max
                try await eventually(within: .seconds(10), every: .milliseconds(100)) {
                    left = (try? await js.streamInfo("KV_kindling_ondisconnect").state.messages) ?? .max
                    return left == 0
                }
                #expect(left == 0)
                // The restarted process lived through it all (unreferenced, it would have been
                // killed at once).
                await reborn.kill()
                await nc.close()
            }
        }
    }

    @Test func aKilledLeadersClientsOnDisconnectWritesRunWithoutAnyoneWriting() async throws {
        try await Self.withNATS { nats in
            let directory = ClusterScratchDirectory()
            let leader = try await Self.startNodeProcess(nats, node: "doomed", dataDirectory: directory)
            #expect(try await TestHTTPConnection.request(port: leader.port, "PUT", "/status.json?ns=quiet", body: #""online""#).status == 200)
            let client = try await TestClient.connect(port: leader.port, namespace: "quiet")
            let registered = try await client.request("o", try json(#"{"p":"/status","d":"offline"}"#))
            #expect(registered.last?["d"]?["b"]?["s"]?.stringValue == "ok")
            try await KindlingServer.run(Self.configuration(nats, node: "survivor", leaseTime: .seconds(1))) { survivor in
                let watcher = try await TestClient.connect(port: survivor.port, namespace: "quiet")
                _ = try await watcher.request("q", try json(#"{"p":"/status","h":""}"#))
                // The registration's put reaches NATS before the kill.
                let (nc, js) = try await Self.jetStream(nats)
                try #require(
                    try await eventually(within: .seconds(10), every: .milliseconds(50)) {
                        (try? await js.streamInfo("KV_kindling_ondisconnect").state.messages) ?? 0 >= 1
                    }, "the registration never reached NATS")
                await nc.close()
                await leader.kill()
                let killed = ContinuousClock.now
                // Nobody writes: the survivor takes the free lease by itself and runs them.
                try #require(
                    try await eventually(within: .seconds(15)) {
                        try await TestHTTPConnection.request(port: survivor.port, "GET", "/status.json?ns=quiet").text == #""offline""#
                    }, "not within 15 s")
                print("onDisconnect of a killed leader's client: run \(ContinuousClock.now - killed) after SIGKILL, with no write (lease 1 s)")
                await watcher.close()
            }
        }
    }
}
