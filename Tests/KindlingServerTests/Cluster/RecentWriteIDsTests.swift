import KindlingCore
import Testing

@testable import KindlingServer

/// The forwarded writes a node remembers by id, without NATS: what a record gives, lookups,
/// and forgetting by count and by age.
@Suite
struct RecentWriteIDsTests {
    static func record(_ sequence: UInt64, id: String?, time: Int64, path: String = "/a", merge: Bool = false) throws -> LogRecord {
        let path = try Path(path)
        let write: Write = merge ? .merge(path, [MergeEntry(path: try Path("b"), node: Node(.number(1)))]) : .set(path, Node(.number(1)))
        return LogRecord(sequence: sequence, write: write, time: time, writeID: id)
    }

    @Test func aRecordWithAnIdIsRememberedWithItsSequenceAndKey() throws {
        var ids = RecentWriteIDs()
        ids.remember(try Self.record(7, id: "push-1", time: 1_000, path: "/messages/-Nabc"))
        ids.remember(try Self.record(8, id: "merge-1", time: 1_001, merge: true))
        ids.remember(try Self.record(9, id: nil, time: 1_001))
        #expect(ids["push-1"] == RecentWriteIDs.Entry(sequence: 7, key: try Key("-Nabc")))
        #expect(ids["merge-1"] == RecentWriteIDs.Entry(sequence: 8, key: nil))
        #expect(ids["unknown"] == nil)
        // A record without an id (an earlier node's, or a write of the leader's own client) is
        // not remembered.
        #expect(ids.count == 2)
        #expect(ids.newestTime == 1_001)
    }

    @Test func anIdSeenAgainKeepsItsFirstRecord() throws {
        var ids = RecentWriteIDs()
        ids.remember(try Self.record(3, id: "x", time: 10))
        ids.remember(try Self.record(5, id: "x", time: 11))
        #expect(ids["x"]?.sequence == 3)
        #expect(ids.count == 1)
    }

    @Test func theOldestAreForgottenBeyondTheCount() throws {
        var ids = RecentWriteIDs(maxCount: 3, maxAge: 1_000_000)
        for sequence in 1...5 as ClosedRange<UInt64> { ids.remember(try Self.record(sequence, id: "w\(sequence)", time: Int64(sequence))) }
        #expect(ids.count == 3)
        #expect(ids["w1"] == nil && ids["w2"] == nil)
        #expect(ids["w3"]?.sequence == 3 && ids["w5"]?.sequence == 5)
    }

    @Test func theOldestAreForgottenBeyondTheAgeOfTheNewestRecord() throws {
        var ids = RecentWriteIDs(maxCount: 100, maxAge: 600_000)
        ids.remember(try Self.record(1, id: "old", time: 1_000_000))
        ids.remember(try Self.record(2, id: "mid", time: 1_300_000))
        // Exactly maxAge older than the newest: still kept.
        ids.remember(try Self.record(3, id: "new", time: 1_600_000))
        #expect(ids.count == 3)
        ids.remember(try Self.record(4, id: "newer", time: 1_600_001))
        #expect(ids["old"] == nil)
        #expect(ids["mid"] != nil && ids["newer"] != nil)
        // A record without an id moves the clock too.
        ids.remember(try Self.record(5, id: nil, time: 2_300_000))
        #expect(ids["mid"] == nil && ids["new"] == nil && ids["newer"] == nil)
        #expect(ids.count == 0)
    }

    /// A later leader whose clock is behind makes records older than the newest: they are kept
    /// as long as they are within the age of the newest time seen.
    @Test func aRecordFromABehindClockIsKeptWithinTheAge() throws {
        var ids = RecentWriteIDs(maxCount: 100, maxAge: 1_000)
        ids.remember(try Self.record(1, id: "ahead", time: 5_000))
        ids.remember(try Self.record(2, id: "behind", time: 4_500))
        #expect(ids["behind"] != nil)
        #expect(ids.newestTime == 5_000)
    }

    @Test func theDefaultsAreTheDocumentedOnes() {
        let ids = RecentWriteIDs()
        #expect(ids.maxCount == 100_000)
        #expect(ids.maxAge == 600_000)
    }
}
