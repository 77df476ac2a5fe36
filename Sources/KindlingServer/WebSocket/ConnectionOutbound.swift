/// Where a namespace sends a connection's messages: its slot in the outbox of the connection's
/// event loop, which writes them in the order the namespace dispatched them. Plain values, so
/// resolving a recipient counts no reference to the connection.
struct ConnectionOutbound: Sendable {
    let outbox: EventLoopOutbox
    let slot: SessionSlot

    /// Closes the connection ("going away", with `reason`), on its event loop.
    func close(reason: String) {
        outbox.close(slot, reason: reason)
    }
}
