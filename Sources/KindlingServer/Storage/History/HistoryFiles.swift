/// A namespace's files as its history sees them: the trees a rebuild can start from (`Base`)
/// and the log segments that follow them, live ones and kept ones alike, each in order.
///
/// A base's time is its file's modification time: a snapshot is written after the write it
/// covers was committed, so the time is never earlier than that write, and a rebuild that starts
/// from the newest base no later than an instant never starts past it (at worst it starts one
/// snapshot earlier and replays more).
struct HistoryFiles: Sendable, Equatable {
    /// A tree to start from: a snapshot, or the empty tree before the first write (no path).
    struct Base: Sendable, Equatable {
        var sequence: UInt64
        var time: Int64
        var path: String?
        /// In the namespace's own folder (not yet retired): never purged.
        var isLive: Bool
        var bytes: Int
    }

    /// A log segment: the records from `start` up to the next segment's start.
    struct Segment: Sendable, Equatable {
        var start: UInt64
        var path: String
        var isLive: Bool
        var bytes: Int
    }

    var bases: [Base]
    var segments: [Segment]

    /// Lists the files of the namespace in `directory`. A segment both kept and still live (a
    /// retirement cut short by a crash) is listed once, as the kept copy, which is complete.
    static func scan(directory: String) -> HistoryFiles {
        var segments: [UInt64: Segment] = [:]
        for (start, path) in StorageLayout.segments(in: directory) {
            segments[start] = Segment(start: start, path: path, isLive: true, bytes: StorageLayout.stamp(path)?.bytes ?? 0)
        }
        for (start, path) in StorageLayout.historySegments(in: directory) {
            segments[start] = Segment(start: start, path: path, isLive: false, bytes: StorageLayout.stamp(path)?.bytes ?? 0)
        }
        var bases: [UInt64: Base] = [:]
        for (sequence, path) in StorageLayout.historySnapshots(in: directory) {
            guard let stamp = StorageLayout.stamp(path) else { continue }
            bases[sequence] = Base(sequence: sequence, time: stamp.time, path: path, isLive: false, bytes: stamp.bytes)
        }
        for (sequence, path) in StorageLayout.snapshots(in: directory) {
            guard let stamp = StorageLayout.stamp(path) else { continue }
            bases[sequence] = Base(sequence: sequence, time: stamp.time, path: path, isLive: true, bytes: stamp.bytes)
        }
        return HistoryFiles(bases: bases.values.sorted { $0.sequence < $1.sequence }, segments: segments.values.sorted { $0.start < $1.start })
            .withEmptyStart()
    }

    /// Adds the empty tree before the first write as a base when the log reaches back to it
    /// (a segment starts at sequence 1, or there is no snapshot at all).
    func withEmptyStart() -> HistoryFiles {
        guard bases.first?.sequence != 0, segments.first?.start == 1 || bases.isEmpty else { return self }
        var files = self
        files.bases.insert(Base(sequence: 0, time: 0, path: nil, isLive: true, bytes: 0), at: 0)
        return files
    }

    /// The last sequence segment `index` can hold: one before the next segment's start (nil for
    /// the last segment, which may still grow).
    func end(ofSegment index: Int) -> UInt64? {
        index + 1 < segments.count ? segments[index + 1].start - 1 : nil
    }

    /// The newest base no later than `time`: where a rebuild of that instant starts.
    func base(atOrBefore time: Int64) -> Base? {
        bases.last { $0.time <= time }
    }

    /// The oldest instant a rebuild can reach.
    var earliest: Int64? { bases.first?.time }

    /// Bytes the kept (not live) files take.
    var keptBytes: Int {
        bases.reduce(0) { $0 + ($1.isLive ? 0 : $1.bytes) } + segments.reduce(0) { $0 + ($1.isLive ? 0 : $1.bytes) }
    }
}
