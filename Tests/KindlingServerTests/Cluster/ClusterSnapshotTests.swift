import KindlingCore
import Testing

@testable import KindlingServer

/// The bytes of a cluster snapshot: what a leader writes, a node that starts reads back whole,
/// and anything damaged is refused rather than loaded half.
@Suite struct ClusterSnapshotTests {
    static func sample() throws -> Node { try Node(json: JSONParser.parse(#"{"a":{"b":1.5,"c":"é"},"list":[true,null,3]}"#), at: .root) }

    @Test func roundTripsTheTreeSequencesAndRules() throws {
        let root = try Self.sample()
        let snapshot = ClusterSnapshot(recordSequence: 42, streamSequence: 9_007_199_254_740_993, rulesSource: #"{"rules":{}}"#, root: root)
        let read = try ClusterSnapshot.decode(try snapshot.encoded(), name: "ns")
        #expect(read.recordSequence == 42 && read.streamSequence == 9_007_199_254_740_993)
        #expect(read.rulesSource == #"{"rules":{}}"# && read.root == root)
        let open = try ClusterSnapshot.decode(
            try ClusterSnapshot(recordSequence: 1, streamSequence: 2, rulesSource: nil, root: .empty).encoded(), name: "ns")
        #expect(open.rulesSource == nil && open.root.isEmpty)
    }

    @Test func refusesDamagedBytes() throws {
        let bytes = try ClusterSnapshot(recordSequence: 7, streamSequence: 8, rulesSource: nil, root: Self.sample()).encoded()
        for damaged in [[], Array(bytes.prefix(3)), Array(bytes.dropLast(2)), [255, 255, 0, 0] + bytes.dropFirst(4), bytes + [0]] {
            #expect(throws: StorageError.self) { try ClusterSnapshot.decode(damaged, name: "ns") }
        }
        let version = Array(#""v":1"#.utf8)
        let at = try #require((0..<(bytes.count - version.count)).first { Array(bytes[$0..<($0 + version.count)]) == version })
        var otherVersion = bytes
        otherVersion[at + version.count - 1] = UInt8(ascii: "2")
        #expect(throws: StorageError.self) { try ClusterSnapshot.decode(otherVersion, name: "ns") }
    }
}
