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

    /// The forwarded writes of its last minute go with it, so a node that starts from it knows
    /// the writes a follower may send again; a snapshot of a node without write ids has none.
    @Test func keepsTheRecentWriteIDs() throws {
        var ids = RecentWriteIDs()
        for (sequence, time) in [(1, 1_000), (2, 30_000), (3, 70_000), (4, 90_000)] as [(UInt64, Int64)] {
            ids.remember(
                LogRecord(sequence: sequence, write: .set(try Path("p/k\(sequence)"), Node(.number(1))), time: time, writeID: "id\(sequence)"))
        }
        // Those at most a minute older than the newest.
        let recent = ids.newest(within: RecentWriteIDs.snapshotAge)
        #expect(recent.map(\.id) == ["id2", "id3", "id4"])
        let snapshot = ClusterSnapshot(recordSequence: 4, streamSequence: 10, rulesSource: nil, root: try Self.sample(), writeIDs: recent)
        let read = try ClusterSnapshot.decode(try snapshot.encoded(), name: "ns")
        #expect(read.writeIDs == recent)
        #expect(read.writeIDs.first?.entry == RecentWriteIDs.Entry(sequence: 2, key: try Key("k2")))
        // A header as nodes without ids wrote it, before the same tree.
        let bytes = try ClusterSnapshot(recordSequence: 4, streamSequence: 10, rulesSource: nil, root: try Self.sample()).encoded()
        let tree = bytes.dropFirst(4 + Int(LogRecord.readUInt32(bytes[...], at: 0)))
        let header = Array(#"{"v":1,"s":"4","q":"10","r":null}"#.utf8)
        var older: [UInt8] = []
        LogRecord.append(UInt32(header.count), to: &older)
        older += header + tree
        let readOlder = try ClusterSnapshot.decode(older, name: "ns")
        let sample = try Self.sample()
        #expect(readOlder.writeIDs.isEmpty && readOlder.root == sample)
        // Damaged write ids are refused.
        var damaged = try snapshot.encoded()
        let marker = Array(#""id3","3""#.utf8)
        let at = try #require((0..<(damaged.count - marker.count)).first { Array(damaged[$0..<($0 + marker.count)]) == marker })
        damaged[at + marker.count - 2] = UInt8(ascii: "x")
        #expect(throws: StorageError.self) { try ClusterSnapshot.decode(damaged, name: "ns") }
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
