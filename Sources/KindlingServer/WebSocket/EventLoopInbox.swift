import NIOCore

/// One event loop's side of request hand-off: every connection's read batch gathered in one
/// loop turn reaches its namespace as one block, instead of one block per connection.
///
/// With many connections each sending one request at a time, every turn of the loop reads a
/// request from each of many sockets; one block per namespace per turn keeps the namespace's
/// queue hops, wake-ups and log appends per turn rather than per request.
final class EventLoopInbox: Sendable {
    let eventLoop: any EventLoop
    /// The server-wide budget what parsing the requests takes is held against (`ParseCost`),
    /// from before each is parsed until its namespace has taken it.
    let parseBudget: InFlightBudget
    /// Read batches waiting for the end of this turn, in arrival order, each with the bytes of
    /// `parseBudget` its requests hold.
    private let pending: NIOLoopBoundBox<[(namespace: Namespace, connection: ConnectionID, inputs: [SessionInput], parsed: Int)]>
    private let handOffQueued: NIOLoopBoundBox<Bool>

    init(eventLoop: any EventLoop, parseBudget: InFlightBudget) {
        self.eventLoop = eventLoop
        self.parseBudget = parseBudget
        self.pending = NIOLoopBoundBox([], eventLoop: eventLoop)
        self.handOffQueued = NIOLoopBoundBox(false, eventLoop: eventLoop)
    }

    /// Queues a connection's read batch for its namespace, with the `parsed` bytes of the parse
    /// budget its requests hold; it leaves after the reads of this turn (tasks run after the
    /// loop has handled every ready socket). On the loop.
    func add(_ inputs: [SessionInput], from connection: ConnectionID, to namespace: Namespace, parsed: Int) {
        pending.value.append((namespace, connection, inputs, parsed))
        guard !handOffQueued.value else { return }
        handOffQueued.value = true
        eventLoop.execute { [self] in handOff() }
    }

    /// Hands everything queued to the namespaces now, each namespace's batches as one block in
    /// arrival order (so each connection's requests stay in order). A connection that ends
    /// calls it before it detaches, so its last requests are not overtaken. On the loop.
    ///
    /// Only the last namespace's block may run here, on the loop: the others go to their own
    /// queues first, so several busy namespaces work on other cores meanwhile instead of one
    /// after another on this thread (with one loop, two namespaces would never use two cores).
    func handOff() {
        handOffQueued.value = false
        var batches = pending.value
        pending.value = []
        while let first = batches.first {
            let namespace = first.namespace
            // A server usually serves one namespace per loop: then this takes everything.
            var mine: [(ConnectionID, [SessionInput])] = []
            mine.reserveCapacity(batches.count)
            var parsed = 0
            batches.removeAll { batch in
                guard batch.namespace === namespace else { return false }
                mine.append((batch.connection, batch.inputs))
                parsed += batch.parsed
                return true
            }
            namespace.submit(mine, mayRunHere: batches.isEmpty, holding: parsed > 0 ? BudgetHold(taken: parsed, from: parseBudget) : nil)
        }
    }
}
