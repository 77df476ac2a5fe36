import Foundation
import KindlingCore
import KindlingServer
import KindlingTesting
import NATSTesting
import Testing

/// The realtime protocol against any node of a cluster: the same exchanges, message for
/// message, as on one server (RealtimeProtocolTests), whether the node leads the namespace or
/// follows it and forwards its writes. (An extension, so these run in the serialized suite.)
extension ClusterNodeTests {
    /// Node 1 leads the namespace (it opens it first); nodes 2 and 3 follow.
    @Test(arguments: [1, 2, 3])
    func theRealtimeProtocolWorksAgainstNode(_ index: Int) async throws {
        try await Self.withNATS { nats in
            try await KindlingServer.run(Self.configuration(nats, node: "one")) { one in
                #expect(try await TestHTTPConnection.request(port: one.port, "PUT", "/opened.json?ns=proto", body: "true").status == 200)
                try await KindlingServer.run(Self.configuration(nats, node: "two")) { two in
                    try await KindlingServer.run(Self.configuration(nats, node: "three")) { three in
                        let ports = [one.port, two.port, three.port]
                        let port = ports[index - 1]
                        // Another node, for listeners that see the writes made through this one.
                        let other = ports[index % 3]
                        try await setsAndListens(port: port, other: other)
                        try await updatesFanOut(port: port, other: other)
                        try await transactionsAreCompareAndSet(port: port)
                        try await RealtimeProtocolTests.taggedQueriesGetFilteredWindows(port: port, namespace: "proto")
                        try await onDisconnectWritesRunAtClose(port: port, other: other)
                        try await serverTimestampsResolve(port: port, other: other)
                    }
                }
            }
        }
    }

    private func describe(_ message: JSONValue) -> String { RealtimeProtocolTests.describe(message) }

    /// Listens (as its first request) on another node than the writer's to `path`, which a write
    /// just set to `value`: that node applies the write when it reads it from the log, so the
    /// listen may come before it and then sees it as the next event.
    private func listen(_ client: TestClient, to path: String, seeing value: String) async throws {
        let heard = try await client.request("q", try json(#"{"p":"/\#(path)","h":""}"#)).map(describe)
        #expect(heard.last == "r1:ok", "\(heard)")
        if !heard.contains("d \(path) \(value)") { #expect(describe(try await client.nextMessage()) == "d \(path) \(value)", "\(heard)") }
    }

    private func setsAndListens(port: Int, other: Int) async throws {
        let writer = try await TestClient.connect(port: port, namespace: "proto")
        let reader = try await TestClient.connect(port: port, namespace: "proto")
        let remote = try await TestClient.connect(port: other, namespace: "proto")
        #expect(try await writer.request("p", try json(#"{"p":"/rooms/a","d":{"n":1}}"#)).map(describe) == ["r1:ok"])
        #expect(try await writer.request("q", try json(#"{"p":"/rooms","h":""}"#)).map(describe) == [#"d rooms {"a":{"n":1}}"#, "r2:ok"])
        #expect(try await reader.request("q", try json(#"{"p":"/rooms/a/n","h":""}"#)).map(describe) == ["d rooms/a/n 1", "r1:ok"])
        try await listen(remote, to: "rooms/a/n", seeing: "1")
        // The writer's own event comes before its ok, on a follower too.
        #expect(try await writer.request("p", try json(#"{"p":"/rooms/a/n","d":2}"#)).map(describe) == ["d rooms/a/n 2", "r3:ok"])
        #expect(describe(try await reader.nextMessage()) == "d rooms/a/n 2")
        #expect(describe(try await remote.nextMessage()) == "d rooms/a/n 2")
        // A listen whose hash matches gets no data.
        _ = try await writer.request("p", try json(#"{"p":"/count","d":10}"#))
        #expect(try await reader.request("q", try json(#"{"p":"/count","h":"+r5aI9HvKKagELki8SYKBk0q7D4="}"#)).map(describe) == ["r2:ok"])
        for client in [writer, reader, remote] { await client.close() }
    }

    private func updatesFanOut(port: Int, other: Int) async throws {
        let writer = try await TestClient.connect(port: port, namespace: "proto")
        let local = try await TestClient.connect(port: port, namespace: "proto")
        let remote = try await TestClient.connect(port: other, namespace: "proto")
        _ = try await writer.request("p", try json(#"{"p":"/fan","d":{"a":{"n":1}}}"#))
        _ = try await writer.request("q", try json(#"{"p":"/fan","h":""}"#))
        #expect(try await local.request("q", try json(#"{"p":"/fan/a/n","h":""}"#)).map(describe) == ["d fan/a/n 1", "r1:ok"])
        try await listen(remote, to: "fan/a/n", seeing: "1")
        let merged = try await writer.request("m", try json(#"{"p":"/fan","d":{"a/n":3,"b":true}}"#))
        #expect(merged.map(describe) == [#"m fan {"a/n":3,"b":true}"#, "r3:ok"])
        for client in [local, remote] { #expect(describe(try await client.nextMessage()) == "d fan/a/n 3") }
        for client in [writer, local, remote] { await client.close() }
    }

    private func transactionsAreCompareAndSet(port: Int) async throws {
        let client = try await TestClient.connect(port: port, namespace: "proto")
        _ = try await client.request("p", try json(#"{"p":"/tx","d":10}"#))
        // A stale hash is refused; the client reads the value and retries with its hash.
        #expect(try await client.request("p", try json(#"{"p":"/tx","d":11,"h":"w28swksk9+tXf5jEdS9R5oSFAv8="}"#)).map(describe) == ["r2:datastale"])
        #expect(try await client.request("g", try json(#"{"p":"/tx","q":{}}"#)).last?["d"]?["b"]?["d"] == .number(10))
        #expect(try await client.request("p", try json(#"{"p":"/tx","d":11,"h":""}"#)).map(describe) == ["r4:datastale"])
        #expect(try await client.request("p", try json(#"{"p":"/tx","d":11,"h":"+r5aI9HvKKagELki8SYKBk0q7D4="}"#)).map(describe) == ["r5:ok"])
        #expect(try await client.request("g", try json(#"{"p":"/tx","q":{}}"#)).last?["d"]?["b"]?["d"] == .number(11))
        #expect(try await client.request("p", try json(#"{"p":"/txfresh","d":1,"h":""}"#)).map(describe) == ["r7:ok"])
        await client.close()
    }

    private func onDisconnectWritesRunAtClose(port: Int, other: Int) async throws {
        let watcher = try await TestClient.connect(port: other, namespace: "proto")
        _ = try await watcher.request("q", try json(#"{"p":"/presence","h":""}"#))
        let leaver = try await TestClient.connect(port: port, namespace: "proto")
        _ = try await leaver.request("p", try json(#"{"p":"/presence/ada","d":true}"#))
        #expect(describe(try await watcher.nextMessage()) == "d presence/ada true")
        #expect(try await leaver.request("o", try json(#"{"p":"/presence/ada","d":null}"#)).map(describe) == ["r2:ok"])
        #expect(try await leaver.request("om", try json(#"{"p":"/presence","d":{"lastSeen":{".sv":"timestamp"}}}"#)).map(describe) == ["r3:ok"])
        _ = try await leaver.request("o", try json(#"{"p":"/presence/cancelled","d":1}"#))
        _ = try await leaver.request("oc", try json(#"{"p":"/presence/cancelled"}"#))
        await leaver.close()
        #expect(describe(try await watcher.nextMessage()) == "d presence/ada null")
        let merge = try await watcher.nextMessage()
        #expect(merge["d"]?["a"]?.stringValue == "m", "\(merge)")
        #expect((merge["d"]?["b"]?["d"]?["lastSeen"]?.numberValue ?? 0) > 1_700_000_000_000)
        #expect(await watcher.isQuiet())
        await watcher.close()
    }

    private func serverTimestampsResolve(port: Int, other: Int) async throws {
        let client = try await TestClient.connect(port: port, namespace: "proto")
        let before = Date().timeIntervalSince1970 * 1000
        _ = try await client.request("q", try json(#"{"p":"/stamped","h":""}"#))
        let written = try await client.request("p", try json(#"{"p":"/stamped/at","d":{".sv":"timestamp"}}"#))
        #expect(written.count == 2 && written.last.map(describe) == "r2:ok", "\(written)")
        let stamp = try #require(written.first?["d"]?["b"]?["d"]?.numberValue)
        let after = Date().timeIntervalSince1970 * 1000
        #expect(stamp >= before.rounded(.down) - 1000 && stamp <= after + 1000)
        // Every node stores the leader's value (another node once it has read the log).
        #expect(try await TestHTTPConnection.request(port: port, "GET", "/stamped/at.json?ns=proto").json() == .number(stamp))
        #expect(
            try await eventually { try await TestHTTPConnection.request(port: other, "GET", "/stamped/at.json?ns=proto").json() == .number(stamp) })
        await client.close()
    }
}
