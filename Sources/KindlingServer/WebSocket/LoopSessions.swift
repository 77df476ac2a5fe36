import NIOCore

/// The realtime sessions of one event loop (WebSocket or long-polling), by slot, and those written since the last flush.
/// Lives on the loop (the outbox reaches it through a `NIOLoopBound`, checked once per batch,
/// not once per recipient), so a delivery finds its connection with an array index.
final class LoopSessions {
    private var handlers = SlotTable<RealtimeCarrier>()
    /// Connections written since the last flush, and whether a flush is already queued.
    private var unflushed: [RealtimeCarrier] = []
    private var flushQueued = false
    /// Set once the server is shutting down: why every connection, even one that arrives
    /// late (accepted before the port closed, upgraded after), is closed.
    var closingReason: String?

    /// Gives `handler` a slot.
    func add(_ handler: RealtimeCarrier) -> SessionSlot {
        handlers.add(handler)
    }

    /// Frees a connection's slot; deliveries still on their way to it are dropped.
    func remove(_ slot: SessionSlot) {
        handlers.remove(slot)
    }

    /// The connection in `slot`, if it is still there.
    func handler(at slot: SessionSlot) -> RealtimeCarrier? {
        handlers[slot]
    }

    /// Every connection of the loop.
    var all: [RealtimeCarrier] { handlers.elements }

    /// Writes one buffer of frames to the connections in `slots`, in order, without flushing;
    /// true when the caller must queue a flush.
    func enqueue(_ frame: ByteBuffer, to slots: ArraySlice<SessionSlot>) -> Bool {
        // A copy of the table: a write that fails closes its connection, which frees its slot
        // in `self.handlers` while this loop runs.
        let handlers = self.handlers
        for slot in slots {
            guard let handler = handlers[slot] else { continue }
            if handler.enqueue(frame) { unflushed.append(handler) }
        }
        guard !unflushed.isEmpty, !flushQueued else { return false }
        flushQueued = true
        return true
    }

    /// Flushes every connection written since the last flush.
    func flush() {
        flushQueued = false
        let written = unflushed
        unflushed = []
        for handler in written { handler.flush() }
    }
}
