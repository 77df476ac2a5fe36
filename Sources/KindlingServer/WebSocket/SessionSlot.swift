/// Where one realtime connection sits in its event loop's table (`LoopSessions`). A fan-out
/// names each recipient by slot, a plain value, so gathering and sending a delivery counts no
/// references. The generation tells a slot's later occupant from a connection that has gone, so
/// a delivery that arrives after its connection closed is dropped, not handed to the next one.
struct SessionSlot: Hashable, Sendable {
    let index: UInt32
    let generation: UInt32
}
