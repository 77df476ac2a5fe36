import KindlingCore
import KindlingTesting
import NATSClient
import NATSTesting
import Synchronization
import Testing

@testable import KindlingServer

/// History in cluster mode: the leader keeps snapshots for it and leaves the log behind them in
/// the stream, and any node reads the past (`at=`, `changes=true`) from JetStream.
extension ClusterNodeTests {
    static func keepingHistory(_ nats: NATSTestCluster, node: String, retention: Duration = .seconds(24 * 3600)) -> ServerConfiguration {
        var configuration = snapshotting(nats, node: node, afterBytes: 2048)
        configuration.cluster?.history = HistoryPolicy(retention: retention, maxBytes: .max, snapshotSpacing: .zero)
        return configuration
    }

    /// The namespace `past`'s history index, nil when none is stored.
    static func historyIndex(_ jetStream: JetStream) async throws -> ClusterHistoryIndex? {
        let store = try await jetStream.objectStore(ClusterNode.snapshotBucket)
        return try await store.get(ClusterHistoryIndex.objectName("past")).flatMap(ClusterHistoryIndex.decode)
    }

    /// A request of these tests, given 120 s: longer than the server's own bounds (a cluster
    /// namespace's first write retries its join for up to 30 s while JetStream elects its
    /// leaders, a leader retries a publish JetStream does not acknowledge for up to about 115 s
    /// with every answer after it held, and a read of the past is given up after 60 s), so a
    /// failure shows the server's answer rather than the test's impatience. On loaded full test
    /// runs a plain read of the leader went unanswered until the test gave up (its namespace
    /// only, NATS idle): a snapshot started just after the log acknowledged its last record
    /// waited for a release that had already passed, and every answer waited behind it (fixed:
    /// `startClusterSnapshot`). A request that gets no answer is recorded with the end of each
    /// NATS server's log (`nats`, when the test gives it).
    static func patientRequest(
        port: Int, _ method: String, _ uri: String, headers: [(String, String)] = [], body: String? = nil,
        nats: NATSTestCluster? = nil
    ) async throws -> TestHTTPResponse {
        do {
            return try await TestHTTPConnection.request(port: port, method, uri, headers: headers, body: body, timeout: .seconds(120))
        } catch TestClientError.timedOut {
            let logs = (nats?.servers ?? []).map { server -> String in
                let tail = server.log().split(separator: "\n").suffix(12).joined(separator: "\n")
                return "\(server.name): \(tail)"
            }
            Issue.record("no answer to \(method) \(uri) on port \(port) within 120 s\n\(logs.joined(separator: "\n"))")
            throw TestClientError.timedOut
        }
    }

    /// The history index, or nil while JetStream does not answer in time (a loaded machine), so
    /// a test waiting for it asks again rather than failing on one slow read.
    static func historyIndexIfAnswered(_ jetStream: JetStream) async -> ClusterHistoryIndex? {
        do {
            return try await historyIndex(jetStream)
        } catch {
            return nil
        }
    }

    /// Writes `/items/i<n>` for each n, each committed after the clock passed the one before;
    /// returns, per write, an instant after it and before the next, with the data then.
    static func writeItems(_ range: ClosedRange<Int>, port: Int, nats: NATSTestCluster) async throws -> [(time: Int64, items: String)] {
        var seen: [(time: Int64, items: String)] = []
        let padding = String(repeating: "x", count: 100)
        for index in range {
            let put = try await Self.patientRequest(
                port: port, "PUT", "/items/i\(index).json?ns=past", body: #"{"n":\#(index),"p":"\#(padding)"}"#, nats: nats)
            #expect(put.status == 200)
            let items = try await Self.patientRequest(port: port, "GET", "/items.json?ns=past", nats: nats).text
            let time = HistoryTime.now()
            seen.append((time, items))
            await PastReadTests.pass(time)
        }
        return seen
    }

    @Test func anyNodeReadsThePastFromTheStreamAcrossKeptSnapshots() async throws {
        try await Self.withNATS { nats in
            let (client, jetStream) = try await Self.jetStream(nats)
            defer { Task { await client.close() } }
            try await KindlingServer.run(Self.keepingHistory(nats, node: "one")) { one in
                #expect(try await Self.patientRequest(port: one.port, "PUT", "/start.json?ns=past", body: "0").status == 200)
                try await KindlingServer.run(Self.keepingHistory(nats, node: "two")) { two in
                    let seen = try await Self.writeItems(1...80, port: one.port, nats: nats)
                    // Snapshots were kept for history, and the log behind them was not purged.
                    try #require(
                        try await eventually(within: .seconds(30)) {
                            await Self.historyIndexIfAnswered(jetStream).map { $0.bases.count >= 3 } ?? false
                        }, "no snapshots kept within 30 s")
                    let index = try #require(try await Self.historyIndex(jetStream))
                    #expect(index.bases.first == .emptyStart)
                    #expect(try await jetStream.message(stream: ClusterNode.logStream, sequence: 1).subject == ClusterNode.logSubject("past"))

                    // Every instant, read on the follower and on the leader, is the data then,
                    // whichever kept snapshot it starts from.
                    for index in [0, 1, 20, 41, 62, 79] {
                        for port in [two.port, one.port] {
                            let read = try await Self.patientRequest(
                                port: port, "GET", "/items.json?ns=past&at=\(seen[index].time)", headers: Self.admin)
                            #expect(read.status == 200)
                            #expect(read.text == seen[index].items, "instant after write \(index + 1) on port \(port)")
                        }
                    }
                    let before = try await Self.patientRequest(port: two.port, "GET", "/items.json?ns=past&at=1", headers: Self.admin)
                    #expect(before.text == "null")

                    // The writes that changed a path, with their kind.
                    #expect(try await Self.patientRequest(port: one.port, "DELETE", "/items/i5.json?ns=past").status == 200)
                    let listed = try await Self.patientRequest(
                        port: two.port, "GET", "/items/i5.json?ns=past&changes=true", headers: Self.admin)
                    guard case .array(let changes) = try listed.json(), changes.count == 2 else {
                        Issue.record("expected two changes, got \(listed.text)")
                        return
                    }
                    #expect(changes.map { $0["kind"]?.stringValue } == ["set", "remove"])
                    #expect(changes[0]["path"]?.stringValue == "/items/i5")

                    // Admins only, as on a single server.
                    let anonymous = try await Self.patientRequest(port: two.port, "GET", "/items.json?ns=past&at=\(seen[3].time)")
                    #expect(anonymous.status == 401)
                }
            }
        }
    }

    @Test func pastTheRetentionTheLogAndKeptSnapshotsArePurgedAndOlderInstantsRefused() async throws {
        try await Self.withNATS { nats in
            let (client, jetStream) = try await Self.jetStream(nats)
            defer { Task { await client.close() } }
            // The retention's clock: the wall clock until the test moves it to the end of the
            // window that starts when the early writes end.
            let windowEnd = Atomic<Int64>(0)
            var configuration = Self.keepingHistory(nats, node: "one", retention: .seconds(3600))
            configuration.cluster?.historyClock = {
                let moved = windowEnd.load(ordering: .relaxed)
                return moved > 0 ? moved : HistoryTime.now()
            }
            try await KindlingServer.run(configuration) { one in
                let early = try await Self.writeItems(1...40, port: one.port, nats: nats)
                // An hour later, as far as the retention can tell: the early writes are out of it.
                let boundary = HistoryTime.now()
                await PastReadTests.pass(boundary)
                windowEnd.store(boundary + 3_600_000, ordering: .relaxed)
                let late = try await Self.writeItems(41...80, port: one.port, nats: nats)
                try #require(
                    try await eventually(within: .seconds(30)) {
                        await Self.historyIndexIfAnswered(jetStream).map { $0.earliest ?? 0 > early[0].time } ?? false
                    }, "nothing purged within 30 s")
                let index = try #require(try await Self.historyIndex(jetStream))
                #expect(index.bases.first != .emptyStart)
                await #expect(throws: JetStreamError.self) { try await jetStream.message(stream: ClusterNode.logStream, sequence: 1) }

                let refused = try await Self.patientRequest(
                    port: one.port, "GET", "/items.json?ns=past&at=\(early[0].time)", headers: Self.admin)
                #expect(refused.status == 404)
                #expect(refused.text.contains("before the kept history"))
                // The instant before the last write is still kept (and rebuilt, not read from
                // the live tree): the data then.
                let inside = late[late.count - 2]
                #expect(try #require(index.earliest) <= inside.time)
                let kept = try await Self.patientRequest(port: one.port, "GET", "/items.json?ns=past&at=\(inside.time)", headers: Self.admin)
                #expect(kept.text == inside.items)
            }
        }
    }

    @Test func withHistoryOffTheLogIsPurgedBehindSnapshotsAndThePastIsNotKept() async throws {
        try await Self.withNATS { nats in
            var configuration = Self.snapshotting(nats, node: "one", afterBytes: 2048)
            configuration.cluster?.history = nil
            try await KindlingServer.run(configuration) { one in
                _ = try await Self.writeItems(1...3, port: one.port, nats: nats)
                let read = try await Self.patientRequest(port: one.port, "GET", "/items.json?ns=past&at=1", headers: Self.admin)
                #expect(read.status == 400)
                #expect(read.text.contains("--history off"))
            }
        }
    }
}
