import Testing

@testable import KindlingServer

/// The purge decided from a file list alone.
struct HistoryPurgePlanTests {
    typealias Base = HistoryFiles.Base
    typealias Segment = HistoryFiles.Segment

    static let hour: Int64 = 3_600_000

    /// History from the first write: segments 1, 101 and 201 kept, snapshots 100 (at 1 h) and
    /// 200 (at 2 h) kept, the live snapshot 300 (at 3 h) and its log.
    static let files = HistoryFiles(
        bases: [
            Base(sequence: 100, time: 1 * hour, path: "h/snapshot-100", isLive: false, bytes: 10),
            Base(sequence: 200, time: 2 * hour, path: "h/snapshot-200", isLive: false, bytes: 10),
            Base(sequence: 300, time: 3 * hour, path: "snapshot-300", isLive: true, bytes: 10),
        ],
        segments: [
            Segment(start: 1, path: "h/log-1", isLive: false, bytes: 5),
            Segment(start: 101, path: "h/log-101", isLive: false, bytes: 5),
            Segment(start: 201, path: "h/log-201", isLive: false, bytes: 5),
            Segment(start: 301, path: "log-301", isLive: true, bytes: 5),
        ]
    ).withEmptyStart()

    static func policy(retention hours: Int64, maxBytes: Int = .max) -> HistoryPolicy {
        HistoryPolicy(retention: .seconds(hours * 3600), maxBytes: maxBytes, snapshotSpacing: .zero)
    }

    @Test func theEmptyTreeBeforeTheFirstWriteIsABase() {
        #expect(Self.files.bases.first == Base(sequence: 0, time: 0, path: nil, isLive: true, bytes: 0))
        #expect(Self.files.base(atOrBefore: Self.hour / 2)?.sequence == 0)
        #expect(Self.files.base(atOrBefore: Self.hour)?.sequence == 100)
        #expect(Self.files.keptBytes == 35)
    }

    @Test func nothingGoesWhileEveryKeptInstantIsInsideTheRetention() {
        #expect(HistoryPurgePlan.deletions(Self.files, policy: Self.policy(retention: 24), now: 4 * Self.hour).isEmpty)
    }

    @Test func whatOnlyInstantsPastTheRetentionNeedGoesOldestFirst() {
        // Cut-off at 1.5 h: a rebuild of it starts at snapshot 100, so log 1 (and the empty
        // start) are no longer needed; snapshot 100 and everything after stay.
        let purged = HistoryPurgePlan.deletions(Self.files, policy: Self.policy(retention: 2), now: 3 * Self.hour + Self.hour / 2)
        #expect(purged == ["h/log-1"])
        // Cut-off after the live snapshot: every kept file goes, the live ones never.
        let all = HistoryPurgePlan.deletions(Self.files, policy: Self.policy(retention: 1), now: 5 * Self.hour)
        #expect(all == ["h/snapshot-100", "h/snapshot-200", "h/log-1", "h/log-101", "h/log-201"])
    }

    @Test func overTheSizeWholeGenerationsGoOldestFirst() {
        // 35 kept bytes, at most 25: log 1 (the empty start's generation) goes, then snapshot
        // 100 with log 101.
        let purged = HistoryPurgePlan.deletions(Self.files, policy: Self.policy(retention: 24, maxBytes: 25), now: 4 * Self.hour)
        #expect(purged == ["h/log-1", "h/snapshot-100", "h/log-101"])
        #expect(HistoryPurgePlan.deletions(Self.files, policy: Self.policy(retention: 24, maxBytes: 0), now: 4 * Self.hour).count == 5)
    }

    @Test func theLastSegmentIsNeverChosenItMayStillGrow() {
        let files = HistoryFiles(
            bases: [Base(sequence: 5, time: 0, path: "h/snapshot-5", isLive: false, bytes: 1)],
            segments: [Segment(start: 6, path: "h/log-6", isLive: false, bytes: 1)])
        #expect(HistoryPurgePlan.deletions(files, policy: Self.policy(retention: 1, maxBytes: 0), now: 10 * Self.hour).isEmpty)
    }
}
