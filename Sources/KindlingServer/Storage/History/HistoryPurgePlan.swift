/// Which kept files a namespace's history no longer needs: decided from the file list alone, so
/// it is tested without a disk or a clock.
///
/// A rebuild of an instant starts at the newest base no later than it and replays the segments
/// after that base; so once an instant older than the retention no longer needs rebuilding,
/// everything before the newest base at or before that cut-off can go. Past `maxBytes`, whole
/// generations (a base and the segments up to the next base) go, oldest first. Live files (the
/// namespace's own snapshot and log) are never chosen.
enum HistoryPurgePlan {
    /// The paths to delete, oldest first.
    static func deletions(_ files: HistoryFiles, policy: HistoryPolicy, now: Int64) -> [String] {
        var files = files
        var deleted: [String] = []
        let (cutoff, underflow) = now.subtractingReportingOverflow(policy.retentionMilliseconds)
        if !underflow, let base = files.base(atOrBefore: cutoff) {
            deleted += drop(before: base.sequence, from: &files)
        }
        while files.keptBytes > policy.maxBytes, files.bases.count >= 2 {
            let before = (files.bases.count, files.segments.count)
            deleted += drop(before: files.bases[1].sequence, from: &files)
            // A live base (an older snapshot not yet retired) stops the loop: it is not ours.
            if (files.bases.count, files.segments.count) == before { break }
        }
        return deleted
    }

    /// Removes from `files` the kept bases older than `sequence` and the kept segments that end
    /// at or before it; their paths.
    private static func drop(before sequence: UInt64, from files: inout HistoryFiles) -> [String] {
        var deleted: [String] = []
        let bases = files.bases.filter { base in
            guard base.sequence < sequence, !base.isLive || base.path == nil else { return true }
            if let path = base.path { deleted.append(path) }
            return false
        }
        var segments: [HistoryFiles.Segment] = []
        for (index, segment) in files.segments.enumerated() {
            if !segment.isLive, let end = files.end(ofSegment: index), end <= sequence {
                deleted.append(segment.path)
            } else {
                segments.append(segment)
            }
        }
        files.bases = bases
        files.segments = segments
        return deleted
    }
}
