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

    /// Adds the `ok` answer to request `number` for one connection; returns its length.
    mutating func add(_ outbound: ConnectionOutbound, acknowledging number: Int) -> Int {
        withBatch(of: outbound.outbox) { $0.add(outbound.slot, acknowledging: number) }
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
    private mutating func withBatch<Result>(of outbox: EventLoopOutbox, _ change: (inout LoopBatch) -> Result) -> Result {
        if let index = index(of: outbox) {
            return change(&batches[index])
        }
        var batch = LoopBatch(outbox: outbox)
        let result = change(&batch)
        batches.append(batch)
        return result
    }

    /// A server has a handful of event loops: a linear search beats hashing.
    private func index(of outbox: EventLoopOutbox) -> Int? {
        batches.firstIndex { $0.outbox === outbox }
    }

    /// Hands each loop its batch, each keeping `holds` until the loop has taken it.
    func deliver(holding holds: [BudgetHold]) {
        for var batch in batches {
            batch.holds = holds
            batch.outbox.deliver(batch)
        }
    }
}
