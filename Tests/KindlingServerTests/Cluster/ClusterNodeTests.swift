import Foundation
import KindlingCore
@testable import KindlingServer
import KindlingTesting
import Logging
import NATSClient
import NATSTesting
import Testing

/// Kindling servers in cluster mode (`--cluster`) on a real three-server NATS JetStream cluster
/// on loopback: the stream and buckets, the leader's replicated log and its fencing, recovery
/// from the stream, and followers. Serialized: one NATS cluster of its own at a time, beside
/// `ClusterFaultTests` (killed, hung and cut-off nodes and servers), which runs its own one at a
/// time (the two halves take about as long; one suite made the longest chain of the test run).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ClusterNodeTests: ClusterSuite {
    @Test func joiningCreatesTheLogStreamAndBucketsReplicatedThreeTimes() async throws {
        try await Self.withNATS { nats in
            try await KindlingServer.run(Self.configuration(nats, node: "n1")) { _ in
                let (client, js) = try await Self.jetStream(nats)
                let log = try await js.streamInfo("KINDLING_LOG")
                #expect(log.config.subjects == ["kindling.log.>"])
                #expect(log.config.replicas == 3)
                #expect(log.config.storage == .file)
                #expect(try await js.streamInfo("KV_kindling_leases").config.replicas == 3)
                #expect(try await js.streamInfo("KV_kindling_nodes").config.replicas == 3)
                #expect(try await js.streamInfo("KV_kindling_ondisconnect").config.replicas == 3)
                await client.close()
            }
            // A second node binds to what the first made instead of failing.
            try await KindlingServer.run(Self.configuration(nats, node: "n2")) { _ in }
        }
    }

    /// A node started while its NATS cluster is still forming (its third server not yet up, so
    /// JetStream cannot place three replicas) waits for it instead of exiting.
    @Test func waitsForAFormingClusterToPlaceItsReplicas() async throws {
        let nats = try await NATSTestCluster.start(size: 3, launched: 2)
        do {
            // What the node meets: the refusal of a cluster still forming.
            let (client, js) = try await Self.jetStream(nats)
            var probe = StreamConfig(name: "PROBE", subjects: ["probe"])
            probe.replicas = 3
            var refusal: Int?
            do throws(JetStreamError) {
                _ = try await js.createStream(probe)
            } catch {
                refusal = error.apiError?.errCode
            }
            await client.close()
            #expect(refusal == JetStreamAPIError.noSuitablePeers)
            let absent = nats.servers[2]
            // The last server joins once the node has met the refusal and said it waits.
            let lines = LogLines()
            var configuration = Self.configuration(nats, node: "early")
            configuration.logger = Logger(label: "kindling-cluster-test") { _ in LineCollector(lines: lines) }
            configuration.logger.logLevel = .warning
            async let launched: Void = {
                #expect(await lines.waitFor("NATS JetStream is not ready yet"))
                try await absent.launch()
            }()
            try await KindlingServer.run(configuration) { server in
                let put = try await TestHTTPConnection.request(port: server.port, "PUT", "/a.json?ns=forming", body: "1")
                #expect(put.status == 200)
            }
            try await launched
        } catch {
            await nats.shutdown()
            throw error
        }
        await nats.shutdown()
    }

    /// A node started while JetStream recovers (all NATS servers restarted, one back so far:
    /// no meta leader yet) is answered "temporarily unavailable" (503); it waits for the others
    /// instead of exiting (issue 38: it exited with code 64 within 0.2 s).
    @Test func waitsForJetStreamToRecoverAfterARestart() async throws {
        try await Self.withNATS { nats in
            for server in nats.servers { await server.kill() }
            let first = nats.servers[0]
            try await first.launch()
            // What the node meets: JetStream up on the one server (once it takes clients), and
            // no meta leader.
            var refusal: JetStreamError?
            try await eventually(within: .seconds(20), every: .milliseconds(100)) {
                guard let client = try? await NATSClient.connect([first.url]) else { return false }
                do throws(JetStreamError) {
                    _ = try await JetStream(client: client, timeout: .seconds(2)).streamInfo("ANY")
                } catch {
                    refusal = error
                }
                await client.close()
                return refusal?.apiError?.code == 503
            }
            #expect(refusal?.apiError?.code == 503, "\(String(describing: refusal))")
            // The others come back once the node has met the refusal and said it waits.
            let lines = LogLines()
            var configuration = Self.configuration(nats, node: "early")
            configuration.logger = Logger(label: "kindling-cluster-test") { _ in LineCollector(lines: lines) }
            configuration.logger.logLevel = .warning
            async let launched: Void = {
                #expect(await lines.waitFor("NATS JetStream is not ready yet"))
                for server in nats.servers.dropFirst() { try await server.launch() }
            }()
            try await KindlingServer.run(configuration) { server in
                let put = try await TestHTTPConnection.request(port: server.port, "PUT", "/a.json?ns=recovering", body: "1")
                #expect(put.status == 200)
            }
            try await launched
        }
    }

    @Test func refusesToStartWhenNATSIsUnreachable() async throws {
        var logger = Logger(label: "kindling-cluster-test")
        logger.logLevel = .critical
        let configuration = ServerConfiguration(
            port: 0, cluster: ClusterConfiguration(urls: ["nats://127.0.0.1:1"], nodeID: "lonely"), logger: logger)
        let error = await #expect(throws: ClusterError.self) { _ = try await KindlingServer.start(configuration) }
        #expect(error.map { "\($0)" }?.contains("cannot reach NATS at nats://127.0.0.1:1") == true)
    }

    @Test func refusesADataDirectoryInClusterMode() async throws {
        var configuration = ServerConfiguration(port: 0, cluster: ClusterConfiguration(urls: ["nats://127.0.0.1:1"]))
        configuration.storage = StorageConfiguration(directory: "/nonexistent/kindling")
        await #expect(throws: ClusterError.self) { _ = try await KindlingServer.start(configuration) }
    }

    @Test func aWriteIsAcknowledgedAfterItsPublishAndANewNodeRecoversItFromTheStream() async throws {
        try await Self.withNATS { nats in
            let (client, js) = try await Self.jetStream(nats)
            try await KindlingServer.run(Self.configuration(nats, node: "first")) { server in
                let put = try await TestHTTPConnection.request(port: server.port, "PUT", "/rooms/a.json?ns=recover", body: #"{"n":1}"#)
                #expect(put.status == 200)
                // Acknowledged, so already in the stream.
                let stored = try await js.lastMessage(stream: "KINDLING_LOG", subject: "kindling.log.recover")
                #expect(String(decoding: stored.payload, as: UTF8.self).contains(#""n":1"#))
                let patch = try await TestHTTPConnection.request(port: server.port, "PATCH", "/rooms.json?ns=recover", body: #"{"b":true}"#)
                #expect(patch.status == 200)
                #expect(try await TestHTTPConnection.request(port: server.port, "DELETE", "/rooms/a/n.json?ns=recover").status == 200)
                #expect(try await TestHTTPConnection.request(port: server.port, "PUT", "/rooms/c.json?ns=recover", body: "3").status == 200)
                #expect(try await js.streamInfo("KINDLING_LOG").state.messages >= 4)
                #expect(try await Self.leaseHolder(Self.leases(js), of: "recover") == "first")
            }
            // No data directory anywhere: a new node reads the namespace back from the stream,
            // takes over the lease the first gave up at shutdown, and writes after it.
            try await KindlingServer.run(Self.configuration(nats, node: "second")) { server in
                let read = try await TestHTTPConnection.request(port: server.port, "GET", "/rooms.json?ns=recover")
                #expect(read.status == 200)
                #expect(try read.json() == (try json(#"{"b":true,"c":3}"#)))
                #expect(try await TestHTTPConnection.request(port: server.port, "PUT", "/rooms/d.json?ns=recover", body: "4").status == 200)
                #expect(try await Self.leaseHolder(Self.leases(js), of: "recover") == "second")
            }
            try await KindlingServer.run(Self.configuration(nats, node: "third")) { server in
                let read = try await TestHTTPConnection.request(port: server.port, "GET", "/rooms.json?ns=recover")
                #expect(try read.json() == (try json(#"{"b":true,"c":3,"d":4}"#)))
            }
            await client.close()
        }
    }

    @Test func aLeaderWhoseLogAnotherWriterAppendedToIsFencedThenRereadsTheLogAndMakesTheWriteAgain() async throws {
        try await Self.withNATS { nats in
            let (client, js) = try await Self.jetStream(nats)
            try await KindlingServer.run(Self.configuration(nats, node: "old")) { server in
                #expect(try await TestHTTPConnection.request(port: server.port, "PUT", "/x.json?ns=fence", body: "1").status == 200)
                let connected = try await TestClient.connect(port: server.port, namespace: "fence")
                _ = try await connected.request("q", try json(#"{"p":"/x","h":""}"#))
                _ = try await connected.request("o", try json(#"{"p":"/gone","d":"bye"}"#))
                // Another writer (a leader this node does not know of) appends to the subject.
                let last = try await js.lastMessage(stream: "KINDLING_LOG", subject: "kindling.log.fence").sequence
                _ = try await js.publish("kindling.log.fence", payload: [], options: PublishOptions(expectedLastSubjectSequence: last))
                // The node's next publish expects the old sequence: the stream refuses it, so the
                // write surely never reached the log. The node is deposed, reads the log again
                // and makes the write again (here, leading once more), so it is answered 200.
                let remade = try await TestHTTPConnection.request(port: server.port, "PUT", "/x.json?ns=fence", body: "2", timeout: .seconds(30))
                #expect(remade.status == 200, "\(remade.status) \(remade.text)")
                // The deposed node dropped its tree: its realtime clients are told to reconnect,
                // and it reads the log again. The other writer holds no lease, so this node takes
                // its own back and writes after the other writer's batch.
                #expect(await connected.waitForClose(timeout: .seconds(5)))
                var status = 0
                try await eventually(within: .seconds(10), every: .milliseconds(100)) {
                    status = try await TestHTTPConnection.request(port: server.port, "PUT", "/x.json?ns=fence", body: "3").status
                    return status == 200
                }
                #expect(status == 200)
                #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/x.json?ns=fence").text == "3")
                // The client the rejoin closed has its onDisconnect write made, as on one server.
                try #require(
                    try await eventually(within: .seconds(5)) {
                        try await TestHTTPConnection.request(port: server.port, "GET", "/gone.json?ns=fence").text == #""bye""#
                    }, "not within 5 s")
                // The refused batch is not in the stream: the other batch, then "2" made again,
                // "3" and the onDisconnect write, each once, in one to three batches (records
                // made while a publish is in flight gather in the next batch).
                let after = try await Self.logMessages(js, namespace: "fence", after: last)
                #expect(after.first?.payload.isEmpty == true)
                let writes = try after.dropFirst().flatMap {
                    try LogSegmentReader.read($0.payload, file: "fence", repair: false).records.map(\.write)
                }
                #expect((2...4).contains(after.count))
                #expect(writes.count == 3)
                #expect(writes.contains(.set(try Path("/x"), Node(.number(2)))))
                #expect(writes.contains(.set(try Path("/x"), Node(.number(3)))))
                #expect(writes.contains(.set(try Path("/gone"), Node(.string("bye")))))
            }
            await client.close()
        }
    }

    @Test func followersOnOtherNodesDeliverTheLeadersWritesToTheirListeners() async throws {
        try await Self.withNATS { nats in
            try await KindlingServer.run(Self.configuration(nats, node: "one")) { one in
                // Node one opens the namespace first, so it leads.
                #expect(try await TestHTTPConnection.request(port: one.port, "PUT", "/room.json?ns=fan", body: #"{"n":0}"#).status == 200)
                try await KindlingServer.run(Self.configuration(nats, node: "two")) { two in
                    try await KindlingServer.run(Self.configuration(nats, node: "three")) { three in
                        let onTwo = try await TestClient.connect(port: two.port, namespace: "fan")
                        let onThree = try await TestClient.connect(port: three.port, namespace: "fan")
                        for listener in [onTwo, onThree] {
                            let replies = try await listener.request("q", try json(#"{"p":"/room/n","h":""}"#))
                            #expect(replies.first?["d"]?["b"]?["d"] == .number(0))
                        }
                        for value in 1...3 {
                            #expect(
                                try await TestHTTPConnection.request(port: one.port, "PUT", "/room/n.json?ns=fan", body: "\(value)").status == 200)
                            for listener in [onTwo, onThree] {
                                let event = try await listener.nextMessage()
                                #expect(event["d"]?["b"]?["p"]?.stringValue == "room/n")
                                #expect(event["d"]?["b"]?["d"] == .number(Double(value)))
                            }
                        }
                        let read = try await TestHTTPConnection.request(port: three.port, "GET", "/room.json?ns=fan")
                        #expect(try read.json() == (try json(#"{"n":3}"#)))
                        await onTwo.close()
                        await onThree.close()
                    }
                }
            }
        }
    }

    @Test func aFollowersWritesGoToTheLeaderAndItsClientSeesItsOwnEventBeforeOk() async throws {
        try await Self.withNATS { nats in
            try await KindlingServer.run(Self.configuration(nats, node: "one")) { one in
                #expect(try await TestHTTPConnection.request(port: one.port, "PUT", "/room.json?ns=fwd", body: #"{"n":0}"#).status == 200)
                try await KindlingServer.run(Self.configuration(nats, node: "two")) { two in
                    try await KindlingServer.run(Self.configuration(nats, node: "three")) { three in
                        let writer = try await TestClient.connect(port: two.port, namespace: "fwd")
                        let watcher = try await TestClient.connect(port: three.port, namespace: "fwd")
                        for client in [writer, watcher] { _ = try await client.request("q", try json(#"{"p":"/room/n","h":""}"#)) }
                        // Realtime write on a follower: the event comes before the ok.
                        let replies = try await writer.request("p", try json(#"{"p":"/room/n","d":5}"#))
                        #expect(replies.count == 2)
                        #expect(replies.first?["d"]?["b"]?["d"] == .number(5))
                        #expect(replies.last?["d"]?["b"]?["s"]?.stringValue == "ok")
                        #expect(try await watcher.nextMessage()["d"]?["b"]?["d"] == .number(5))
                        // A transaction whose hash is stale is refused by the leader.
                        let stale = try await writer.request("p", try json(#"{"p":"/room/n","d":6,"h":"stale-hash"}"#))
                        #expect(stale.last?["d"]?["b"]?["s"]?.stringValue == "datastale")
                        // REST writes on followers, answered as on the leader.
                        let put = try await TestHTTPConnection.request(port: two.port, "PUT", "/room/n.json?ns=fwd", body: "7")
                        #expect(put.status == 200 && put.text == "7")
                        let patch = try await TestHTTPConnection.request(port: three.port, "PATCH", "/room.json?ns=fwd", body: #"{"m":"x"}"#)
                        #expect(patch.status == 200 && patch.text == #"{"m":"x"}"#)
                        let post = try await TestHTTPConnection.request(port: three.port, "POST", "/room/list.json?ns=fwd", body: "1")
                        let name = try #require(try post.json()["name"]?.stringValue, "\(post.status): \(post.text)")
                        let read = try await TestHTTPConnection.request(port: one.port, "GET", "/room.json?ns=fwd")
                        #expect(try read.json() == (try json(#"{"list":{"\#(name)":1},"m":"x","n":7}"#)))
                        // The rules are the leader's: a write they refuse is refused on a follower too.
                        let refused = try await TestHTTPConnection.request(port: two.port, "PUT", "/room/n.json?ns=fwd", body: #"{".sv":"nonsense"}"#)
                        #expect(refused.status == 400)
                        await writer.close()
                        await watcher.close()
                    }
                }
            }
        }
    }

    @Test func transactionsFromThreeNodesOnOneCounterLoseNoUpdate() async throws {
        try await Self.withNATS { nats in
            try await KindlingServer.run(Self.configuration(nats, node: "one")) { one in
                #expect(try await TestHTTPConnection.request(port: one.port, "PUT", "/count.json?ns=tx", body: "0").status == 200)
                try await KindlingServer.run(Self.configuration(nats, node: "two")) { two in
                    try await KindlingServer.run(Self.configuration(nats, node: "three")) { three in
                        let perNode = 8
                        let commits = try await withThrowingTaskGroup(of: Int.self) { group in
                            for port in [one.port, two.port, three.port] {
                                group.addTask { try await Self.increment(port: port, times: perNode) }
                            }
                            var total = 0
                            for try await retries in group { total += retries }
                            return total
                        }
                        #expect(commits == 3 * perNode)
                        for port in [one.port, two.port, three.port] {
                            let read = try await TestHTTPConnection.request(port: port, "GET", "/count.json?ns=tx")
                            #expect(read.text == "\(3 * perNode)")
                        }
                    }
                }
            }
        }
    }

    /// Adds 1 to `/count` `times` times with REST compare-and-set (ETag, if-match), retrying on
    /// 412 with the value and ETag it returns; returns how many writes succeeded.
    static func increment(port: Int, times: Int) async throws -> Int {
        let http = try await TestHTTPConnection.connect(port: port)
        defer { http.close() }
        var response = try await http.request("GET", "/count.json?ns=tx", headers: [("X-Firebase-ETag", "true")])
        var succeeded = 0
        var attempts = 0
        while succeeded < times, attempts < 500 {
            attempts += 1
            let value = Int(response.text) ?? -1000
            let etag = response.header("etag") ?? ""
            response = try await http.request("PUT", "/count.json?ns=tx", headers: [("if-match", etag)], body: "\(value + 1)")
            if response.status == 200 {
                succeeded += 1
            } else if response.status != 412 {
                return -1000
            }
        }
        return succeeded
    }
}
