import Testing

@testable import KindlingServer

/// What a cluster's history keeps and purges, decided from its index alone.
struct ClusterHistoryIndexTests {
    typealias Base = ClusterHistoryIndex.Base

    static func base(_ stream: UInt64, time: Int64, bytes: Int = 100, logBytes: Int = 1000) -> Base {
        Base(streamSequence: stream, recordSequence: stream * 2, time: time, bytes: bytes, logBytes: logBytes)
    }

    static let index = ClusterHistoryIndex(bases: [.emptyStart, base(10, time: 1000), base(50, time: 5000), base(90, time: 9000)])

    static func policy(retention: Duration = .seconds(3), maxBytes: Int = .max, spacing: Duration = .seconds(1)) -> HistoryPolicy {
        HistoryPolicy(retention: retention, maxBytes: maxBytes, snapshotSpacing: spacing)
    }

    @Test func anInstantIsRebuiltFromTheNewestBaseNoLaterThanIt() {
        #expect(Self.index.base(atOrBefore: 999)?.streamSequence == 0)
        #expect(Self.index.base(atOrBefore: 1000)?.streamSequence == 10)
        #expect(Self.index.base(atOrBefore: 8999)?.streamSequence == 50)
        #expect(Self.index.base(atOrBefore: 100_000)?.streamSequence == 90)
        #expect(Self.index.earliest == 0)
        #expect(ClusterHistoryIndex(bases: [Self.base(10, time: 1000)]).base(atOrBefore: 999) == nil)
    }

    @Test func whatIsInsideTheRetentionStays() {
        let plan = Self.index.purge(policy: Self.policy(), now: 3999)
        #expect(plan.kept == Self.index)
        #expect(plan.dropped.isEmpty)
        #expect(plan.purgeBefore == nil)
    }

    @Test func pastTheRetentionEverythingBeforeTheNewestBaseAtTheCutOffGoes() {
        // Cut-off 6500: an instant then is rebuilt from the base at 5000, which stays.
        let plan = Self.index.purge(policy: Self.policy(), now: 9500)
        #expect(plan.kept.bases.map(\.streamSequence) == [50, 90])
        #expect(plan.kept.bases[0].logBytes == 0)
        #expect(plan.dropped.map(\.streamSequence) == [10])
        #expect(plan.purgeBefore == 51)
        #expect(plan.kept.earliest == 5000)
    }

    @Test func theEmptyStartGoesOnceAKeptSnapshotIsOlderThanTheCutOff() {
        let plan = Self.index.purge(policy: Self.policy(), now: 4500)
        #expect(plan.kept.bases.map(\.streamSequence) == [10, 50, 90])
        #expect(plan.dropped.isEmpty)
        #expect(plan.purgeBefore == 11)
    }

    @Test func pastTheSizeLimitWholeGenerationsGoOldestFirstButNeverTheNewest() {
        // Each generation: a 100-byte snapshot and 1000 bytes of log before it.
        var plan = Self.index.purge(policy: Self.policy(retention: .seconds(3600), maxBytes: 2299), now: 9500)
        #expect(plan.kept.bases.map(\.streamSequence) == [50, 90])
        #expect(plan.kept.keptBytes == 1200)
        #expect(plan.dropped.map(\.streamSequence) == [10])
        plan = Self.index.purge(policy: Self.policy(retention: .seconds(3600), maxBytes: 1), now: 9500)
        #expect(plan.kept.bases.map(\.streamSequence) == [90])
        #expect(plan.purgeBefore == 91)
    }

    @Test func aSnapshotIsKeptOncePerSpacing() {
        let policy = Self.policy(spacing: .seconds(2))
        #expect(ClusterHistoryIndex().keeps(snapshotAt: 5, policy: policy))
        #expect(!Self.index.keeps(snapshotAt: 10_999, policy: policy))
        #expect(Self.index.keeps(snapshotAt: 11_000, policy: policy))
    }

    @Test func theIndexRoundTripsAndADamagedOneIsRefused() {
        let big = ClusterHistoryIndex(bases: [Base(streamSequence: .max - 1, recordSequence: .max, time: 1_733_390_000_000, bytes: 5, logBytes: 6)])
        #expect(ClusterHistoryIndex.decode(big.encoded()) == big)
        #expect(ClusterHistoryIndex.decode(Self.index.encoded()) == Self.index)
        #expect(ClusterHistoryIndex.decode(Array("not json".utf8)) == nil)
        #expect(ClusterHistoryIndex.decode(Array(#"{"v":2,"bases":[]}"#.utf8)) == nil)
        #expect(ClusterHistoryIndex.decode(Array(#"{"v":1,"bases":[{"q":"1"}]}"#.utf8)) == nil)
        let unordered = ClusterHistoryIndex(bases: [Self.base(50, time: 1), Self.base(10, time: 2)])
        #expect(ClusterHistoryIndex.decode(unordered.encoded()) == nil)
    }
}
