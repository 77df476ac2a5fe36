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

    /// Each message in order, with the slots of its recipients.
    func forEachMessage(_ body: ([ByteBuffer], ArraySlice<SessionSlot>) -> Void) {
        var start = 0
        for run in runs {
            body(run.frames, slots[start..<run.end])
            start = run.end
        }
    }
}
