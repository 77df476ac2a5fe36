import NIOCore

/// One dispatch's realtime deliveries, gathered per event loop so each loop gets one task.
struct LoopBatches: Sendable {
    private var batches: [(outbox: EventLoopOutbox, deliveries: [(ConnectionOutbound, [ByteBuffer])])] = []

    mutating func add(_ outbound: ConnectionOutbound, _ frames: [ByteBuffer]) {
        // Per recipient of a fan-out: appended in place, no array made for the one delivery.
        if let index = index(of: outbound.outbox) {
            batches[index].deliveries.append((outbound, frames))
        } else {
            batches.append((outbound.outbox, [(outbound, frames)]))
        }
    }

    /// Appends `later`'s deliveries after these, loop by loop.
    mutating func append(_ later: LoopBatches) {
        for batch in later.batches { add(batch.outbox, batch.deliveries) }
    }

    private mutating func add(_ outbox: EventLoopOutbox, _ deliveries: [(ConnectionOutbound, [ByteBuffer])]) {
        guard let index = index(of: outbox) else { return batches.append((outbox, deliveries)) }
        batches[index].deliveries.append(contentsOf: deliveries)
    }

    /// A server has a handful of event loops: a linear search beats hashing.
    private func index(of outbox: EventLoopOutbox) -> Int? {
        batches.firstIndex { $0.outbox === outbox }
    }

    /// Hands each loop its batch.
    func deliver() {
        for batch in batches { batch.outbox.deliver(batch.deliveries) }
    }
}
