import KindlingCore

/// What a namespace's history keeps in cluster mode (docs/cluster.md): the snapshots kept for
/// history, each an object `<namespace>@<stream sequence>` in `kindling_snapshots`, listed in
/// the object `<namespace>@history` (this index). The log itself stays in the stream behind the
/// oldest kept base instead of being purged behind each snapshot, so any instant from the oldest
/// base on is rebuilt from the newest base no later than it and the log after it.
///
/// Only the namespace's leader changes the index (after writing a snapshot, in its term), and
/// the purge it plans is decided from the index alone, so it is tested without NATS or a clock.
struct ClusterHistoryIndex: Sendable, Equatable {
    /// A tree a rebuild can start from.
    struct Base: Sendable, Equatable {
        /// The stream sequence up to which the snapshot holds every batch (0: the empty tree
        /// before the namespace's first write).
        var streamSequence: UInt64
        /// The record sequence of the snapshot's last write.
        var recordSequence: UInt64
        /// When the snapshot was taken, in milliseconds since 1970: after its last write was
        /// committed, so a rebuild that starts from the newest base no later than an instant
        /// never starts past it.
        var time: Int64
        /// The snapshot's size.
        var bytes: Int
        /// About how many bytes of log were published between the base before this one and
        /// this one (what the leaders that wrote them counted).
        var logBytes: Int

        /// The empty tree before the first write: a base while the log reaches back to it.
        static let emptyStart = Base(streamSequence: 0, recordSequence: 0, time: 0, bytes: 0, logBytes: 0)

        /// The object holding this base's snapshot.
        func objectName(_ namespace: String) -> String { "\(namespace)@\(streamSequence)" }
    }

    /// Oldest first. Starts with `emptyStart` until the log before the first kept snapshot is
    /// purged.
    var bases: [Base] = [.emptyStart]

    /// The object that holds a namespace's index.
    static func objectName(_ namespace: String) -> String { "\(namespace)@history" }

    /// The newest base no later than `time`.
    func base(atOrBefore time: Int64) -> Base? { bases.last { $0.time <= time } }

    /// The oldest instant a rebuild can reach.
    var earliest: Int64? { bases.first?.time }

    /// Bytes the kept snapshots and the log between them take, about (the log before the
    /// oldest base is not kept).
    var keptBytes: Int { bases.reduce(0) { $0 + $1.bytes + $1.logBytes } - (bases.first?.logBytes ?? 0) }

    /// True when a snapshot taken at `time` should be kept: none kept yet, or the newest kept
    /// one is at least the policy's spacing older.
    func keeps(snapshotAt time: Int64, policy: HistoryPolicy) -> Bool {
        guard let newest = bases.last(where: { $0.streamSequence > 0 }) else { return true }
        return time - newest.time >= policy.spacingMilliseconds
    }

    /// What the policy no longer keeps at `now`: the bases to delete and the stream sequence
    /// the namespace's log may be purged behind (nil: none of it yet). The first base left is
    /// the oldest reachable instant; the log before it goes. Mirrors `HistoryPurgePlan`: past
    /// the retention, everything before the newest base at or before the cut-off goes; past
    /// `maxBytes`, whole generations go, oldest first, the newest base always staying.
    func purge(policy: HistoryPolicy, now: Int64) -> (kept: ClusterHistoryIndex, dropped: [Base], purgeBefore: UInt64?) {
        var kept = self
        var dropped: [Base] = []
        let (cutoff, underflow) = now.subtractingReportingOverflow(policy.retentionMilliseconds)
        if !underflow, let index = kept.bases.lastIndex(where: { $0.time <= cutoff }), index > 0 {
            dropped += kept.bases[..<index]
            kept.bases.removeFirst(index)
        }
        while kept.bases.count >= 2, kept.keptBytes > policy.maxBytes {
            dropped.append(kept.bases.removeFirst())
        }
        guard !dropped.isEmpty else { return (self, [], nil) }
        kept.bases[0].logBytes = 0
        let purgeBefore = kept.bases[0].streamSequence > 0 ? kept.bases[0].streamSequence + 1 : nil
        return (kept, dropped.filter { $0.streamSequence > 0 }, purgeBefore)
    }

    // MARK: Stored form

    /// `{"v":1,"bases":[{"q":"…","s":"…","t":…,"b":…,"l":…},…]}` (sequences as strings: a
    /// JSON number loses a 64-bit integer's last digits).
    func encoded() -> [UInt8] {
        let bases = self.bases.map { base in
            JSONValue.object([
                JSONMember("q", .string(String(base.streamSequence))), JSONMember("s", .string(String(base.recordSequence))),
                JSONMember("t", .number(Double(base.time))), JSONMember("b", .number(Double(base.bytes))),
                JSONMember("l", .number(Double(base.logBytes))),
            ])
        }
        return Array(JSONWriter.string(.object([JSONMember("v", .number(1)), JSONMember("bases", .array(bases))])).utf8)
    }

    /// Reads a stored index; nil for anything else (the caller treats a damaged index as no
    /// history rather than as a wrong one).
    static func decode(_ bytes: [UInt8]) -> ClusterHistoryIndex? {
        guard let value = try? JSONParser.parse(bytes), value["v"]?.numberValue == 1, case .array(let items)? = value["bases"] else { return nil }
        var bases: [Base] = []
        for item in items {
            guard let stream = item["q"]?.stringValue.flatMap({ UInt64($0) }), let record = item["s"]?.stringValue.flatMap({ UInt64($0) }),
                let time = item["t"]?.numberValue.flatMap({ Int64(exactly: $0) }), let bytes = item["b"]?.numberValue.flatMap({ Int(exactly: $0) }),
                let logBytes = item["l"]?.numberValue.flatMap({ Int(exactly: $0) })
            else { return nil }
            bases.append(Base(streamSequence: stream, recordSequence: record, time: time, bytes: bytes, logBytes: logBytes))
        }
        guard zip(bases, bases.dropFirst()).allSatisfy({ $0.streamSequence < $1.streamSequence }) else { return nil }
        return ClusterHistoryIndex(bases: bases)
    }
}
