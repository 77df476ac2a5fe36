/// Where a reader of a namespace's log stands, and whether the next message continues what it
/// applied. Every batch a leader publishes names, in its `Kindling-Previous` header, the stream
/// sequence of the batch it builds on (the one its tree ended with). A reader applies a batch
/// only when that is the last batch it applied (`head`), so it never serves a tree with a hole:
///
/// - a batch that builds on an earlier batch, one another batch already continued, forks the
///   log: two leaders each thought they wrote after the same batch. nats-server before 2.11
///   can store both (it checks a publish's expected last subject sequence against what it has
///   applied, not against what it proposed or, after a leader change, what its log still
///   holds). The first one stored wins, for every reader alike; the later one, and any batch
///   built on it, is void. Its leader checks its place before acknowledging anything
///   (`ReplicatedLog`), so no acknowledged write is in a void batch;
/// - a batch that builds on one this reader never read (nor found void) means it missed a
///   batch: it must not serve past it, and reads the log again.
///
/// A value: the namespace keeps one, and it is tested without NATS.
struct LogChain: Equatable {
    /// The stream sequence of the last batch applied (a snapshot's, after loading one).
    private(set) var head: UInt64
    /// The stream sequence of the last message read, applied or void.
    private(set) var read: UInt64
    /// The void batches read since `head`: a batch built on one of them is void too.
    private var void: Set<UInt64> = []

    /// What to do with a message.
    enum Verdict: Equatable {
        /// Apply it: it continues the chain (or is a batch written before batches named their
        /// predecessor).
        case apply
        /// Skip it: read already (a consumer's redelivery).
        case alreadyRead
        /// Skip it: it forks the log (it builds on `previous`, which another batch continued).
        case void(previous: UInt64)
        /// Stop reading: it builds on batch `previous`, which this reader never read.
        case gap(previous: UInt64)
    }

    /// A reader that starts at the log's start (`head` 0), or from a snapshot covering the
    /// stream up to batch `head`.
    init(head: UInt64 = 0) {
        self.head = head
        self.read = head
    }

    /// Takes the message at `streamSequence`, which builds on batch `previous` (nil when it does
    /// not say), and returns what to do with it. A gap changes nothing: the reader starts over.
    mutating func admit(_ streamSequence: UInt64, previous: UInt64?) -> Verdict {
        guard streamSequence > read else { return .alreadyRead }
        guard let previous, previous != head else {
            head = streamSequence
            read = streamSequence
            void = []
            return .apply
        }
        guard previous < head || void.contains(previous) else { return .gap(previous: previous) }
        read = streamSequence
        void.insert(streamSequence)
        return .void(previous: previous)
    }
}
