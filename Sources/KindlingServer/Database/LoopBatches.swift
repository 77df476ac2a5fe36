import NIOCore

/// One dispatch's realtime deliveries, gathered per event loop so each loop gets one task.
struct LoopBatches: Sendable {
    private var batches: [LoopBatch] = []

    /// Adds a recipient of message number `message` (numbered by the dispatch, in order).
    mutating func add(_ outbound: ConnectionOutbound, _ frames: [ByteBuffer], message: Int) {
        // Per recipient of a fan-out: a slot appended in place, nothing else.
        withBatch(of: outbound.outbox) { $0.add(outbound.slot, frames, message: message) }
    }

    /// Adds a message for one connection alone, of at most one frame's length.
    mutating func add(_ outbound: ConnectionOutbound, single message: [UInt8]) {
        withBatch(of: outbound.outbox) { $0.add(outbound.slot, single: message) }
    }

    /// Appends `later`'s deliveries after these, loop by loop.
    mutating func append(_ later: LoopBatches) {
        for batch in later.batches {
            // A loop with nothing yet takes the batch as it is (no copy of its small messages).
            if let index = index(of: batch.outbox) {
                batches[index].append(batch)
            } else {
                batches.append(batch)
            }
        }
    }

    /// Changes the batch of `outbox`, made empty first when there is none yet.
    private mutating func withBatch(of outbox: EventLoopOutbox, _ change: (inout LoopBatch) -> Void) {
        if let index = index(of: outbox) {
            change(&batches[index])
        } else {
            var batch = LoopBatch(outbox: outbox)
            change(&batch)
            batches.append(batch)
        }
    }

    /// A server has a handful of event loops: a linear search beats hashing.
    private func index(of outbox: EventLoopOutbox) -> Int? {
        batches.firstIndex { $0.outbox === outbox }
    }

    /// Hands each loop its batch.
    func deliver() {
        for batch in batches { batch.outbox.deliver(batch) }
    }
}
