import Foundation
import KindlingCore
@testable import KindlingServer
import KindlingTesting
import NATSClient
import NATSTesting
import Testing

/// A refusal that is no answer: a NATS server that led the log stream, cut off from its peers
/// and back before it learned that another server leads, still answers publishes as the leader
/// for a moment, refusing them from its old store ("wrong last sequence: <its old last>"), while
/// the real leader stores the same publish and acknowledges it second. A fault run found a
/// leader that took such a refusal as proof that another node wrote the log: it dropped its
/// batch as never stored and made the compare-and-set in it again, which then failed (412)
/// against its own stored value. Here a subscriber of the test plays that server: it answers the
/// batch's publish first, while the NATS servers following the stream are stopped so the real
/// leader cannot acknowledge it yet. (An extension, so it runs in the serialized suite.)
extension ClusterNodeTests {
    @Test func aStaleStreamLeadersRefusalDoesNotUnmakeAStoredWrite() async throws {
        try await Self.withNATS(executable: NATSTestServer.recentExecutable()) { nats in
            // A first node creates the stream; the leading node then connects to the stream's
            // leader alone, so its publish reaches it while the other servers are stopped.
            try await KindlingServer.run(Self.configuration(nats, node: "setup")) { _ in }
            let (probe, js) = try await Self.jetStream(nats)
            let leaderName = try #require(try await js.streamInfo(ClusterNode.logStream).cluster?.leader)
            let streamLeader = try #require(nats.server(named: leaderName))
            let others = nats.servers.filter { $0.name != leaderName }
            let urls = [streamLeader.url]
            let namespace = "stale-refusal"
            let url = "/counter.json?ns=\(namespace)"

            try await KindlingServer.run(Self.configuration(urls: urls, node: "lead")) { lead in
                #expect(try await TestHTTPConnection.request(port: lead.port, "PUT", url, body: "0").status == 200)
                let read = try await TestHTTPConnection.request(port: lead.port, "GET", url, headers: [("X-Firebase-ETag", "true")])
                let etag = try #require(read.header("etag"))

                let impostor = try await NATSClient.connect([streamLeader.url])
                let publishes = try await impostor.subscribe(ClusterNode.logSubject(namespace))
                try await impostor.flush()
                var published = publishes.makeAsyncIterator()
                for server in others { try await server.pause() }
                let write = Task {
                    try await TestHTTPConnection.request(
                        port: lead.port, "PUT", url, headers: [("if-match", etag)], body: "1", timeout: .seconds(30))
                }
                // The batch's first try, answered at once as the stale leader answers it.
                let batch = try #require(await published.next())
                let reply = try #require(batch.reply)
                try await impostor.publish(
                    reply, payload: Array(#"{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 0"}}"#.utf8))
                try await impostor.flush()
                await impostor.close()
                for server in others { try await server.resume() }

                let answer = try await write.value
                #expect(answer.status == 200, "\(answer.status) \(answer.text)")
                // Stored once, and every node (one that starts now too) reads it.
                try await KindlingServer.run(Self.configuration(nats, node: "late")) { late in
                    for port in [lead.port, late.port] {
                        let counter = try await TestHTTPConnection.request(port: port, "GET", url).text
                        #expect(counter == "1", "port \(port)")
                    }
                }
                let ids = try await Self.logMessages(js, namespace: namespace, after: 0).compactMap { $0.headers?["Nats-Msg-Id"] }
                #expect(ids.count == 2, "\(ids)")
            }
            await probe.close()
        }
    }

    /// The same refusal of the delete that takes a closed connection's onDisconnect
    /// registrations out of NATS: taken as "the leader made them", it lost them.
    @Test func aStaleStreamLeadersRefusalDoesNotLoseOnDisconnectWrites() async throws {
        try await Self.withNATS(executable: NATSTestServer.recentExecutable()) { nats in
            let namespace = "stale-ondisconnect"
            let url = "/presence/alice.json?ns=\(namespace)"
            try await KindlingServer.run(Self.configuration(nats, node: "one")) { one in
                #expect(try await TestHTTPConnection.request(port: one.port, "PUT", url, body: #""online""#).status == 200)
                let (probe, js) = try await Self.jetStream(nats)
                let bucket = "KV_" + ClusterNode.registrationBucket
                let leaderName = try #require(try await js.streamInfo(bucket).cluster?.leader)
                let bucketLeader = try #require(nats.server(named: leaderName))
                let others = nats.servers.filter { $0.name != leaderName }
                // The follower whose client leaves reaches NATS through the bucket's leader alone.
                try await KindlingServer.run(Self.configuration(urls: [bucketLeader.url], node: "two")) { two in
                    let leaving = try await TestClient.connect(port: two.port, namespace: namespace)
                    let registered = try await leaving.request("o", try json(#"{"p":"/presence/alice","d":"offline"}"#))
                    #expect(registered.last?["d"]?["b"]?["s"]?.stringValue == "ok")
                    let subjects = "$KV.\(ClusterNode.registrationBucket).\(namespace).>"
                    let stored = try await eventually(within: .seconds(10), every: .milliseconds(20)) {
                        (try? await js.lastMessage(stream: bucket, subject: subjects)) != nil
                    }
                    try #require(stored, "the registration never reached NATS")

                    let impostor = try await NATSClient.connect([bucketLeader.url])
                    let deletes = try await impostor.subscribe(subjects)
                    try await impostor.flush()
                    var published = deletes.makeAsyncIterator()
                    for server in others { try await server.pause() }
                    await leaving.close()
                    let delete = try #require(await published.next())
                    #expect(delete.headers?["KV-Operation"] == "DEL")
                    try await impostor.publish(
                        try #require(delete.reply),
                        payload: Array(#"{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 0"}}"#.utf8))
                    try await impostor.flush()
                    await impostor.close()
                    for server in others { try await server.resume() }

                    let made = try await eventually(within: .seconds(20), every: .milliseconds(50)) {
                        (try? await TestHTTPConnection.request(port: one.port, "GET", url).text) == #""offline""#
                    }
                    #expect(made, "the onDisconnect write was not made")
                }
                await probe.close()
            }
        }
    }

    /// A stale read after a refusal that proves something: a renewal refused for a later
    /// message (as the real leader refuses one whose earlier try went through) made the leader
    /// read the key, and a stale store answered with a holder from before its term, so it gave
    /// the lease up and was deposed. The bucket's leader is stopped, so a subscriber of the test
    /// answers first, both the renewal and the read.
    @Test func aStaleLeaseReadAfterARefusedRenewalDoesNotDeposeTheLeader() async throws {
        try await Self.withNATS(executable: NATSTestServer.recentExecutable()) { nats in
            try await KindlingServer.run(Self.configuration(nats, node: "setup")) { _ in }
            let (probe, js) = try await Self.jetStream(nats)
            let bucket = "KV_" + ClusterNode.leaseBucket
            let leaderName = try #require(try await js.streamInfo(bucket).cluster?.leader)
            let bucketLeader = try #require(nats.server(named: leaderName))
            // The leading node and the stand-in reach NATS through a server that follows.
            let follower = try #require(nats.servers.first { $0.name != leaderName })
            let namespace = "stale-lease"
            let key = "$KV.\(ClusterNode.leaseBucket).\(namespace)"

            try await KindlingServer.run(Self.configuration(urls: [follower.url], node: "lead")) { lead in
                let url = "/n.json?ns=\(namespace)"
                #expect(try await TestHTTPConnection.request(port: lead.port, "PUT", url, body: "1").status == 200)
                let client = try await TestClient.connect(port: lead.port, namespace: namespace)

                let impostor = try await NATSClient.connect([follower.url])
                let renewals = try await impostor.subscribe(key)
                let reads = try await impostor.subscribe("$JS.API.STREAM.MSG.GET.\(bucket)")
                try await impostor.flush()
                var renewal = renewals.makeAsyncIterator()
                var read = reads.makeAsyncIterator()
                try await bucketLeader.pause()
                // The next renewal, refused for the message after the revision it expected.
                let renew = try #require(await renewal.next())
                let revision = try #require(renew.headers?["Nats-Expected-Last-Subject-Sequence"].flatMap { UInt64($0) })
                try await impostor.publish(
                    try #require(renew.reply),
                    payload: Array(#"{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: \#(revision + 1)"}}"#.utf8))
                // The read that follows, answered from a store older than that message: another
                // node held the key then.
                let get = try #require(await read.next())
                let data = Data("someone-else".utf8).base64EncodedString()
                try await impostor.publish(
                    try #require(get.reply),
                    payload: Array(#"{"message":{"subject":"\#(key)","seq":\#(revision),"data":"\#(data)","time":"2026-12-07T00:00:00Z"}}"#.utf8))
                try await impostor.flush()
                await impostor.close()
                try await bucketLeader.resume()

                // The lease goes on: the stored try, then renewals after it.
                let renewed = try await eventually(within: .seconds(20), every: .milliseconds(50)) {
                    ((try? await js.lastMessage(stream: bucket, subject: key))?.sequence ?? 0) > revision + 1
                }
                #expect(renewed, "the lease was not renewed after the refusal")
                // Never deposed: a deposal closes every realtime connection of the namespace.
                #expect(await !client.waitForClose(timeout: .milliseconds(500)), "the leader was deposed")
                #expect(try await TestHTTPConnection.request(port: lead.port, "PUT", url, body: "2").status == 200)
                await client.close()
            }
            await probe.close()
        }
    }
}
