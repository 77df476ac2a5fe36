import KindlingCore
import KindlingServer
import KindlingTesting
import Testing

/// A write in cluster mode is one message of the replicated log, which NATS caps (max_payload,
/// 1 MB by default): a larger write is refused when it is decided, and many writes that together
/// exceed the cap go out as several batches, so neither stalls nor deposes the leader.
extension ClusterNodeTests {
    @Test func aWriteOverNATSMaxPayloadIsRefusedAndBigBatchesAreSplit() async throws {
        try await Self.withNATS { nats in
            try await KindlingServer.run(Self.configuration(nats, node: "one")) { one in
                try await KindlingServer.run(Self.configuration(nats, node: "two")) { two in
                    #expect(try await TestHTTPConnection.request(port: one.port, "PUT", "/small.json?ns=big", body: "1").status == 200)
                    let huge = "\"" + String(repeating: "a", count: 1_100_000) + "\""
                    for port in [one.port, two.port] {
                        let refused = try await TestHTTPConnection.request(port: port, "PUT", "/huge.json?ns=big", body: huge)
                        #expect(refused.status == 413, "\(refused.status) \(refused.text.prefix(200))")
                    }
                    // Numbers that grow when written out (5e20 is 21 digits) are measured as stored.
                    let growing = "[" + Array(repeating: "5e20", count: 60_000).joined(separator: ",") + "]"
                    let grown = try await TestHTTPConnection.request(port: one.port, "PUT", "/grown.json?ns=big", body: growing)
                    #expect(grown.status == 413, "\(grown.status) \(grown.text.prefix(200))")
                    // Realtime: refused with its message, the connection stays.
                    let client = try await TestClient.connect(port: two.port, namespace: "big")
                    let replies = try await client.request("p", try json(#"{"p":"/huge","d":\#(huge)}"#))
                    #expect(replies.last?["d"]?["b"]?["s"]?.stringValue == "too_big", "\(replies.last.map { "\($0)".prefix(200) } ?? "")")
                    // Writes that fit, together well over the cap, all committed at once.
                    let value = "\"" + String(repeating: "b", count: 200_000) + "\""
                    let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                        for index in 0..<12 {
                            group.addTask {
                                try await TestHTTPConnection.request(port: one.port, "PUT", "/many/m\(index).json?ns=big", body: value).status
                            }
                        }
                        return try await group.reduce(into: [Int]()) { $0.append($1) }
                    }
                    #expect(statuses == Array(repeating: 200, count: 12))
                    let after = try await client.request("p", try json(#"{"p":"/small","d":2}"#))
                    #expect(after.last?["d"]?["b"]?["s"]?.stringValue == "ok")
                    try #require(
                        try await eventually(within: .seconds(5)) {
                            try await TestHTTPConnection.request(port: two.port, "GET", "/many.json?ns=big&shallow=true").text.split(separator: ",")
                                .count == 12
                        }, "not within 5 s")
                    await client.close()
                }
            }
        }
    }

    @Test func aNodeOverItsNamespaceCapRefusesNewNamespacesEvenForReads() async throws {
        try await Self.withNATS { nats in
            var configuration = Self.configuration(nats, node: "capped")
            configuration.maxNamespaces = 3
            try await KindlingServer.run(configuration) { node in
                for name in ["a", "b", "c"] {
                    #expect(try await TestHTTPConnection.request(port: node.port, "GET", "/.json?ns=\(name)").status == 200)
                }
                // Reads would otherwise open (and follow, lease, keep) one namespace each.
                let read = try await TestHTTPConnection.request(port: node.port, "GET", "/.json?ns=d")
                #expect(read.status == 507, "\(read.status) \(read.text)")
                let write = try await TestHTTPConnection.request(port: node.port, "PUT", "/x.json?ns=e", body: "1")
                #expect(write.status == 507)
                let client = try await TestClient.connect(port: node.port, namespace: "f")
                let listen = try await client.request("q", try json(#"{"p":"/","h":""}"#))
                #expect(listen.last?["d"]?["b"]?["s"]?.stringValue != "ok")
                await client.close()
                // The namespaces it holds still work.
                #expect(try await TestHTTPConnection.request(port: node.port, "PUT", "/x.json?ns=a", body: "1").status == 200)
            }
        }
    }
}
