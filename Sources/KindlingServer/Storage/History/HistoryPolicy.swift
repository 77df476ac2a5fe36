/// How much of a namespace's past its data directory keeps (`kindling serve --history`), so any
/// moment in the window can be rebuilt: the log segments and snapshots a newer snapshot makes
/// redundant are kept (segments compressed) instead of deleted, and purged once older than
/// `retention` or beyond `maxBytes`, oldest first.
public struct HistoryPolicy: Sendable, Equatable {
    /// How far back a restore can reach.
    public var retention: Duration
    /// The most bytes one namespace's kept history may take; past it the oldest goes first,
    /// even inside `retention`, so history never fills a disk by itself.
    public var maxBytes: Int
    /// The least time between two kept snapshots: a restore replays at most this much log
    /// from the snapshot before it, and a busy namespace does not keep a snapshot per
    /// `--snapshot-mb` of writes.
    public var snapshotSpacing: Duration
    /// Each write's log record says who made it (its uid, admin, or unauthenticated), for the
    /// list of changes. Off by default: a uid is personal data an operator decides to keep.
    public var recordsWriters: Bool

    /// On by default for a day, within a gigabyte per namespace: a bad write found the next
    /// morning can still be undone, and the disk a busy namespace's day of log would need is
    /// bounded.
    public static let standard = HistoryPolicy(retention: .seconds(24 * 3600), maxBytes: 1 << 30, snapshotSpacing: .seconds(3600))

    /// Keeps everything: for the offline commands, which do not know the server's policy and
    /// leave the purge to its next start.
    static let keepAll = HistoryPolicy(retention: .seconds(Int64.max / 1000), maxBytes: .max, snapshotSpacing: .zero)

    public init(retention: Duration, maxBytes: Int, snapshotSpacing: Duration, recordsWriters: Bool = false) {
        self.recordsWriters = recordsWriters
        self.retention = retention
        self.maxBytes = maxBytes
        self.snapshotSpacing = snapshotSpacing
    }

    /// `retention` in milliseconds.
    var retentionMilliseconds: Int64 { HistoryPolicy.milliseconds(retention) }

    /// `snapshotSpacing` in milliseconds.
    var spacingMilliseconds: Int64 { HistoryPolicy.milliseconds(snapshotSpacing) }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds.multipliedReportingOverflow(by: 1000).overflow ? .max : seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
