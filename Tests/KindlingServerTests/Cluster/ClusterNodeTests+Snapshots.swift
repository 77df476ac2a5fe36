import KindlingCore
@testable import KindlingServer
import KindlingTesting
import NATSClient
import NATSTesting
import Testing

/// Snapshots in cluster mode: the leader writes them to the `kindling_snapshots` object store as
/// its log grows and purges the log behind the one before; a node that starts afterwards loads
/// the snapshot and the log after it, with the namespace's own rules.
extension ClusterNodeTests {
    static func snapshotting(_ nats: NATSTestCluster, node: String, afterBytes: Int) -> ServerConfiguration {
        var configuration = configuration(nats, node: node)
        configuration.cluster?.snapshotAfterBytes = afterBytes
        // Without history, so the log is purged behind each snapshot (`ClusterNodeTests+History`
        // keeps it).
        configuration.cluster?.history = nil
        return configuration
    }

    @Test func aLeaderSnapshotsAndPurgesItsLogAndNewNodesStartFromTheSnapshot() async throws {
        try await Self.withNATS { nats in
            let (client, jetStream) = try await Self.jetStream(nats)
            defer { Task { await client.close() } }
            try await KindlingServer.run(Self.snapshotting(nats, node: "one", afterBytes: 2048)) { one in
                #expect(try await TestHTTPConnection.request(port: one.port, "PUT", "/items/first.json?ns=snap", body: "0").status == 200)
                try await KindlingServer.run(Self.snapshotting(nats, node: "three", afterBytes: 2048)) { three in
                    let watcher = try await TestClient.connect(port: three.port, namespace: "snap")
                    _ = try await watcher.request("q", try json(#"{"p":"/items","h":""}"#))
                    let http = try await TestHTTPConnection.connect(port: one.port)
                    defer { http.close() }
                    let padding = String(repeating: "x", count: 100)
                    for index in 1...120 {
                        if index == 60 {
                            let rules = try await TestHTTPConnection.request(
                                port: one.port, "PUT", "/.settings/rules.json?ns=snap", headers: Self.admin,
                                body: #"{"rules":{".read":true,"items":{".write":true}}}"#)
                            #expect(rules.status == 200)
                        }
                        let put = try await http.request("PUT", "/items/i\(index).json?ns=snap", body: #"{"n":\#(index),"p":"\#(padding)"}"#)
                        #expect(put.status == 200)
                    }
                    // Snapshots were written, and the log's first batches purged behind them.
                    try #require(
                        try await eventually(within: .seconds(5)) {
                            let stored = try await Self.snapshot(jetStream)
                            return stored.map { $0.recordSequence >= 100 } ?? false
                        }, "not within 5 s")
                    let stored = try #require(try await Self.snapshot(jetStream))
                    #expect(stored.rulesSource?.contains("items") == true)
                    #expect(stored.root.child(at: try Path("/items/i50")).isEmpty == false)
                    try #require(
                        try await eventually(within: .seconds(5)) {
                            do {
                                _ = try await jetStream.message(stream: ClusterNode.logStream, sequence: 1)
                                return false
                            } catch {
                                return (error as? JetStreamError)?.apiError?.errCode == JetStreamAPIError.noMessageFound
                            }
                        }, "not within 5 s")
                    // The follower that read along got every write.
                    let expected = try await TestHTTPConnection.request(port: one.port, "GET", "/items.json?ns=snap").text
                    try #require(
                        try await eventually(within: .seconds(5)) {
                            try await TestHTTPConnection.request(port: three.port, "GET", "/items.json?ns=snap").text == expected
                        }, "not within 5 s")
                    await watcher.close()

                    // A node that starts now loads the snapshot, then the log after it.
                    try await KindlingServer.run(Self.snapshotting(nats, node: "two", afterBytes: 2048)) { two in
                        let read = try await TestHTTPConnection.request(port: two.port, "GET", "/items.json?ns=snap")
                        #expect(read.text == expected)
                        let locked = try await TestHTTPConnection.request(port: two.port, "PUT", "/locked.json?ns=snap", body: "1")
                        #expect(locked.status == 401)
                        let after = try await TestHTTPConnection.request(port: two.port, "PUT", "/items/last.json?ns=snap", body: "1")
                        #expect(after.status == 200)
                        try #require(
                            try await eventually(within: .seconds(5)) {
                                try await TestHTTPConnection.request(port: three.port, "GET", "/items/last.json?ns=snap").text == "1"
                            }, "not within 5 s")
                    }
                }
            }
        }
    }

    /// The namespace `snap`'s snapshot in the object store, nil when none.
    static func snapshot(_ jetStream: JetStream, namespace: String = "snap") async throws -> ClusterSnapshot? {
        let store = try await jetStream.objectStore(ClusterNode.snapshotBucket)
        guard let bytes = try await store.get(namespace) else { return nil }
        return try ClusterSnapshot.decode(bytes, name: namespace)
    }

    /// A snapshot started when the log has acknowledged every record (an operator's snapshot
    /// of an idle namespace; or a due one, when the log's thread acknowledged the last batch
    /// before the snapshot was held) holds nothing back: the answers after it are given at
    /// once. Before, the snapshot waited for a release that had passed, and every request to
    /// the namespace went unanswered until its next write.
    @Test func aSnapshotOfAnIdleNamespaceHoldsNoAnswerBack() async throws {
        try await Self.withNATS { nats in
            let (client, jetStream) = try await Self.jetStream(nats)
            defer { Task { await client.close() } }
            try await KindlingServer.run(Self.snapshotting(nats, node: "one", afterBytes: 1 << 30)) { one in
                #expect(try await TestHTTPConnection.request(port: one.port, "PUT", "/v.json?ns=idle", body: "1").status == 200)
                #expect(one.snapshot().contains("idle"))
                let read = try await TestHTTPConnection.request(port: one.port, "GET", "/v.json?ns=idle", timeout: .seconds(10))
                #expect(read.text == "1")
                // And the snapshot was written.
                try #require(
                    try await eventually(within: .seconds(10)) {
                        try await Self.snapshot(jetStream, namespace: "idle").map { $0.recordSequence >= 1 } ?? false
                    }, "no snapshot within 10 s")
            }
        }
    }
}
