import KindlingCore
import NIOCore

/// The ids of the forwarded writes a node committed lately, each with what the answer to its
/// follower needs: the sequence of its record and, for a set record (what a push makes), the
/// last key of its path (a push's new name). Every node keeps it as it commits the log, leader
/// and followers alike, since a follower may lead next: a follower whose forwarded write went
/// unanswered sends it again, with its id, to whoever leads then, and that node answers a write
/// it finds here from here instead of applying it a second time (`Namespace.forward`).
///
/// Bounded by count and by age, whichever is smaller. A write is sent again only within its
/// follower's deadline (`ForwardingAttempts.deadline`, 20 s from its first send), so an id is
/// needed for that long after its record was made. The age, 10 minutes of record time, leaves
/// room for the leaders' clocks disagreeing (ages are measured on the records' commit times,
/// from the clocks of the leaders that made them) and costs nothing when writes are few. The
/// count, 100,000 (about 10 MB at most), bounds the memory of a namespace taking many writes:
/// it still covers the deadline up to 5,000 forwarded writes a second. Records' times are the
/// measure, not this node's clock, so every node that read the same log remembers the same ids,
/// and a node that reads a long log at start keeps only its newest ones.
struct RecentWriteIDs: Sendable {
    /// What a follower's answer needs of a remembered write.
    struct Entry: Sendable, Equatable {
        /// The record's sequence.
        var sequence: UInt64
        /// The last key of a set record's path (for a push, the name it got); nil for a merge.
        var key: Key?
    }

    /// A remembered write with its id and record time, as a snapshot keeps it.
    struct Remembered: Sendable, Equatable {
        var id: String
        var entry: Entry
        var time: Int64
    }

    static let defaultMaxCount = 100_000
    /// Ten minutes, in milliseconds of record time.
    static let defaultMaxAge: Int64 = 600_000

    let maxCount: Int
    let maxAge: Int64
    private var entries: [String: Entry] = [:]
    /// The ids in the order they were committed, with their records' times: what is evicted
    /// first is at the front.
    private var order = CircularBuffer<(id: String, time: Int64)>()
    /// The newest record time seen: ages are measured from it.
    private(set) var newestTime: Int64 = 0

    init(maxCount: Int = defaultMaxCount, maxAge: Int64 = defaultMaxAge) {
        self.maxCount = max(1, maxCount)
        self.maxAge = max(0, maxAge)
    }

    /// How many ids are remembered.
    var count: Int { entries.count }

    /// The entry of `id`, if it is remembered.
    subscript(id: String) -> Entry? { entries[id] }

    /// Remembers the write of `record`, when it carries an id, and forgets what is now too old
    /// or too many (a record without an id moves the clock all the same).
    mutating func remember(_ record: LogRecord) {
        guard let id = record.writeID else {
            newestTime = max(newestTime, record.time)
            return evict()
        }
        let key: Key? = if case .set(let path, _) = record.write { path.last } else { nil }
        remember(id, Entry(sequence: record.sequence, key: key), time: record.time)
    }

    /// Remembers `id` as committed in `entry` at `time` (milliseconds since 1970, the record's).
    /// An id already remembered keeps its first entry: the first record made with it is the
    /// write's.
    mutating func remember(_ id: String, _ entry: Entry, time: Int64) {
        newestTime = max(newestTime, time)
        if entries[id] == nil {
            entries[id] = entry
            order.append((id, time))
        }
        evict()
    }

    /// The writes whose records are at most `age` milliseconds older than the newest, oldest
    /// first: what a cluster snapshot keeps (`ClusterSnapshot.writeIDs`), so a node that starts
    /// from it, which never reads the records before it, still knows the writes a follower may
    /// send again.
    func newest(within age: Int64) -> [Remembered] {
        let oldest = newestTime >= Int64.min + age ? newestTime - age : Int64.min
        return order.compactMap { remembered in
            guard remembered.time >= oldest, let entry = entries[remembered.id] else { return nil }
            return Remembered(id: remembered.id, entry: entry, time: remembered.time)
        }
    }

    /// A minute of record time: what a snapshot keeps of the ids, three times a follower's
    /// deadline for sending a write again (`ForwardingAttempts.overall`).
    static let snapshotAge: Int64 = 60_000

    private mutating func evict() {
        // Compared without subtracting from a time that may be near Int64.min.
        let oldest = newestTime >= Int64.min + maxAge ? newestTime - maxAge : Int64.min
        while let first = order.first, order.count > maxCount || first.time < oldest {
            order.removeFirst()
            entries[first.id] = nil
        }
    }
}
