import NIOCore

/// One dispatch's realtime deliveries, gathered per event loop so each loop gets one task.
struct LoopBatches: Sendable {
    private var batches: [(outbox: EventLoopOutbox, deliveries: [(ConnectionOutbound, [ByteBuffer])])] = []

    mutating func add(_ outbound: ConnectionOutbound, _ frames: [ByteBuffer]) {
        add(outbound.outbox, [(outbound, frames)])
    }

    /// Appends `later`'s deliveries after these, loop by loop.
    mutating func append(_ later: LoopBatches) {
        for batch in later.batches { add(batch.outbox, batch.deliveries) }
    }

    private mutating func add(_ outbox: EventLoopOutbox, _ deliveries: [(ConnectionOutbound, [ByteBuffer])]) {
        // A server has a handful of event loops: a linear search beats hashing.
        if let index = batches.firstIndex(where: { $0.outbox === outbox }) {
            batches[index].deliveries.append(contentsOf: deliveries)
        } else {
            batches.append((outbox, deliveries))
        }
    }

    /// Hands each loop its batch.
    func deliver() {
        for batch in batches { batch.outbox.deliver(batch.deliveries) }
    }
}
