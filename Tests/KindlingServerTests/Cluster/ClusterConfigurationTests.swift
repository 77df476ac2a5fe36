import Testing

@testable import KindlingServer

/// The order in which a node tries its NATS servers.
@Suite
struct ClusterConfigurationTests {
    static let urls = ["nats://a:4222", "nats://b:4222", "nats://c:4222"]

    static func first(_ node: String, urls: [String] = urls) -> String? {
        ClusterConfiguration(urls: urls, nodeID: node).connectionOrder.first
    }

    @Test func numberedNodesStartAtTheirOwnServer() {
        #expect(Self.first("kindling-1") == "nats://a:4222")
        #expect(Self.first("kindling-2") == "nats://b:4222")
        #expect(Self.first("kindling-3") == "nats://c:4222")
        #expect(Self.first("kindling-4") == "nats://a:4222")
        #expect(Self.first("node0") == "nats://a:4222")
        // The order is a rotation: every server, each once, the others after the first.
        #expect(ClusterConfiguration(urls: Self.urls, nodeID: "kindling-2").connectionOrder == ["nats://b:4222", "nats://c:4222", "nats://a:4222"])
    }

    @Test func otherIdsSpreadByAStableHash() {
        let ids = (0..<60).map { "node-\($0)-x" }
        let firsts = ids.compactMap { Self.first($0) }
        #expect(Set(firsts) == Set(Self.urls))
        #expect(ids.map { Self.first($0) } == ids.map { Self.first($0) })
        // Over-long numbers do not overflow: hashed instead.
        #expect(Self.first("n99999999999999999999") != nil)
    }

    @Test func oneURLIsKeptAsItIs() {
        #expect(ClusterConfiguration(urls: ["nats://a:4222"], nodeID: "kindling-2").connectionOrder == ["nats://a:4222"])
        #expect(ClusterConfiguration(urls: [], nodeID: "kindling-2").connectionOrder == [])
    }
}
