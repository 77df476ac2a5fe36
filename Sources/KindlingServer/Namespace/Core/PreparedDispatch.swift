import CoreMetrics
import NIOCore

/// One dispatch's outputs resolved to their connections: realtime frames gathered per event
/// loop, event-stream chunks in order. Made on the namespace's queue, which knows where each
/// connection's messages go; sent from any thread, so the log's thread can release what waited
/// for a sync without a hop back onto that queue.
struct PreparedDispatch: Sendable {
    private var loops = LoopBatches()
    /// Each stream's chunks, with budget held until its socket has taken them (its first event):
    /// a slow stream holds its own and nothing else.
    private var streams: [(outbound: EventStreamOutbound, chunks: [ByteBuffer], holds: [BudgetHold])] = []
    /// Messages handed to connections, and their bytes, for the fan-out counters.
    private(set) var messages = 0
    private var bytes = 0
    /// Budget held until every event loop has taken its batch (see `BudgetHold`).
    private var holds: [BudgetHold] = []

    /// Keeps `hold` until the outputs have been handed to their connections (or dropped).
    mutating func hold(_ hold: BudgetHold) {
        holds.append(hold)
    }

    /// Keeps `hold` until `outbound`'s socket has taken what this dispatch sends it (nothing
    /// to keep it for when it sends it nothing).
    mutating func hold(_ hold: BudgetHold, untilWrittenTo outbound: EventStreamOutbound) {
        guard let index = streams.lastIndex(where: { $0.outbound === outbound }) else { return }
        streams[index].holds.append(hold)
    }

    /// Adds a realtime recipient of message number `message` (numbered in dispatch order, so a
    /// loop keeps one copy of each message's frames for all its recipients).
    mutating func add(_ outbound: ConnectionOutbound, _ frames: [ByteBuffer], message: Int, bytes: Int) {
        loops.add(outbound, frames, message: message)
        messages += 1
        self.bytes += bytes
    }

    /// Adds a realtime message for `outbound` alone, of at most one frame's length.
    mutating func add(_ outbound: ConnectionOutbound, single message: [UInt8]) {
        loops.add(outbound, single: message)
        messages += 1
        bytes += message.count
    }

    /// Adds the `ok` answer to request `number` for `outbound`.
    mutating func add(_ outbound: ConnectionOutbound, acknowledging number: Int) {
        bytes += loops.add(outbound, acknowledging: number)
        messages += 1
    }

    mutating func add(_ outbound: EventStreamOutbound, _ chunks: [ByteBuffer], bytes: Int) {
        // A stream's consecutive messages (one block's events for it) go out as one task.
        if let last = streams.indices.last, streams[last].outbound === outbound {
            streams[last].chunks.append(contentsOf: chunks)
        } else {
            streams.append((outbound, chunks, []))
        }
        messages += 1
        self.bytes += bytes
    }

    /// Appends `later`'s outputs after this one's: each connection still gets them in order,
    /// and each event loop one task for both.
    mutating func append(_ later: PreparedDispatch) {
        loops.append(later.loops)
        streams.append(contentsOf: later.streams)
        holds.append(contentsOf: later.holds)
        messages += later.messages
        bytes += later.bytes
    }

    /// Hands each event loop its batch and each stream its chunks; two atomic additions to the
    /// fan-out counters however many recipients there were.
    func send(metrics: ServerMetrics?) {
        guard messages > 0 else { return }
        loops.deliver(holding: holds)
        for stream in streams { stream.outbound.send(stream.chunks, holding: stream.holds) }
        guard let metrics else { return }
        metrics.fanoutDeliveries.increment(by: messages)
        metrics.fanoutBytes.increment(by: bytes)
    }
}
