import NIOCore

/// One event loop's share of a dispatch: each message's frames once, then the slots of the
/// connections that get it, in dispatch order. A fan-out to thousands of this loop's connections
/// is one frames array and a run of plain slots, not an array and a reference per recipient.
struct LoopBatch: Sendable {
    let outbox: EventLoopOutbox
    /// Each message with the end of its run in `slots` (the run starts where the previous ends).
    private var runs: [(frames: [ByteBuffer], end: Int)] = []
    private var slots: [SessionSlot] = []
    /// The dispatch's number of the message of the last run, while recipients are added.
    private var lastMessage: Int?

    init(outbox: EventLoopOutbox) { self.outbox = outbox }

    /// Adds a recipient of message number `message` (numbered by the dispatch, in order): the
    /// same message as the last run extends it.
    mutating func add(_ slot: SessionSlot, _ frames: [ByteBuffer], message: Int) {
        slots.append(slot)
        if message == lastMessage, let last = runs.indices.last {
            runs[last].end = slots.count
        } else {
            runs.append((frames, slots.count))
            lastMessage = message
        }
    }

    /// Appends `later`'s messages after these (numbers from another dispatch never extend a run).
    mutating func append(_ later: LoopBatch) {
        let offset = slots.count
        slots.append(contentsOf: later.slots)
        runs.append(contentsOf: later.runs.lazy.map { ($0.frames, $0.end + offset) })
        lastMessage = nil
    }

    /// A message with at least this many recipients on the loop is copied into a buffer of the
    /// loop's own before it is handed to them.
    static let sharedAcrossLoops = 8

    /// The messages in order, each run of consecutive ones that go to exactly the same
    /// connections as one delivery: their frames joined into one buffer, which each of those
    /// connections is handed once (a fan-out of many events to the same listeners costs one
    /// hand-over per listener, not one per event). Each connection still gets its messages in
    /// dispatch order: a run holds every message between its first and last, for all of them.
    ///
    /// A message to many connections is also copied into a buffer of the loop's own, so the
    /// loops do not count references to one shared buffer from two cores at once.
    func forEachDelivery(_ body: ([ByteBuffer], ArraySlice<SessionSlot>) -> Void) {
        var start = 0
        var index = 0
        while index < runs.count {
            let recipients = slots[start..<runs[index].end]
            var last = index
            while last + 1 < runs.count, Self.same(recipients, slots[runs[last].end..<runs[last + 1].end]) { last += 1 }
            if last == index, recipients.count < Self.sharedAcrossLoops {
                body(runs[index].frames, recipients)
            } else {
                let total = runs[index...last].reduce(0) { sum, run in run.frames.reduce(sum) { $0 + $1.readableBytes } }
                var joined = ByteBufferAllocator().buffer(capacity: total)
                for run in runs[index...last] {
                    for frame in run.frames { joined.writeImmutableBuffer(frame) }
                }
                body([joined], recipients)
            }
            start = runs[last].end
            index = last + 1
        }
    }

    /// Whether two runs of slots name the same connections in the same order.
    private static func same(_ a: ArraySlice<SessionSlot>, _ b: ArraySlice<SessionSlot>) -> Bool {
        a.count == b.count && a.elementsEqual(b)
    }
}
