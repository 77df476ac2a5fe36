import NIOCore

/// One dispatch's realtime deliveries, gathered per event loop so each loop gets one task.
struct LoopBatches {
    private var batches: [(outbox: EventLoopOutbox, deliveries: [(ConnectionOutbound, [ByteBuffer])])] = []

    mutating func add(_ outbound: ConnectionOutbound, _ frames: [ByteBuffer]) {
        // A server has a handful of event loops: a linear search beats hashing.
        if let index = batches.firstIndex(where: { $0.outbox === outbound.outbox }) {
            batches[index].deliveries.append((outbound, frames))
        } else {
            batches.append((outbound.outbox, [(outbound, frames)]))
        }
    }

    /// Hands each loop its batch.
    func deliver() {
        for batch in batches { batch.outbox.deliver(batch.deliveries) }
    }
}
