import NIOCore

/// One event loop's side of fan-out. A namespace hands it every frame bound for this loop's
/// connections as one task (not one task per connection), and the loop flushes each connection
/// once per turn however many messages reached it, so a busy connection gets one `writev` for
/// many messages.
final class EventLoopOutbox: Sendable {
    let eventLoop: any EventLoop
    private let sessions: NIOLoopBound<LoopSessions>

    /// Made on `eventLoop`.
    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
        self.sessions = NIOLoopBound(LoopSessions(), eventLoop: eventLoop)
    }

    /// Gives a connection of this loop its slot (on the loop). During shutdown the connection
    /// is closed as soon as it has been set up.
    func add(_ handler: RealtimeCarrier) -> SessionSlot {
        let sessions = sessions.value
        if let reason = sessions.closingReason {
            eventLoop.assumeIsolated().execute { handler.closeGoingAway(reason: reason) }
        }
        return sessions.add(handler)
    }

    /// Frees a connection's slot (on the loop).
    func remove(_ slot: SessionSlot) {
        sessions.value.remove(slot)
    }

    /// Writes each message of `batch` to its connections on the loop, in order; flushes after
    /// what is already queued on the loop has run.
    func deliver(_ batch: LoopBatch) {
        eventLoop.execute { [self] in
            let sessions = sessions.value
            var queueFlush = false
            batch.forEachDelivery { frame, slots in
                if sessions.enqueue(frame, to: slots) { queueFlush = true }
            }
            guard queueFlush else { return }
            eventLoop.execute { [self] in self.sessions.value.flush() }
        }
    }

    /// Closes every connection of the loop with "going away" and `reason` (the server is
    /// stopping): what each was sent goes out first, then the close frame. Done when every one
    /// has closed, or after `limit` (a client that does not read cannot hold the stop up).
    func closeAll(reason: String, within limit: TimeAmount) -> EventLoopFuture<Void> {
        eventLoop.flatSubmit { [self] in
            sessions.value.closingReason = reason
            let closed = sessions.value.all.compactMap { handler in
                handler.closeGoingAway(reason: reason)
                return handler.closeFuture
            }
            let done = eventLoop.makePromise(of: Void.self)
            let timeout = eventLoop.scheduleTask(in: limit) { done.succeed() }
            EventLoopFuture.andAllComplete(closed, on: eventLoop).whenComplete { _ in
                timeout.cancel()
                done.succeed()
            }
            return done.futureResult
        }
    }

    /// The addresses of the connections in `slots` (those still there), read on the loop, for
    /// a profiler that started after they connected.
    func remoteAddresses(of slots: [(ConnectionID, SessionSlot)]) -> EventLoopFuture<[(ConnectionID, SocketAddress)]> {
        eventLoop.submit { [self] in
            let sessions = sessions.value
            return slots.compactMap { connection, slot in sessions.handler(at: slot)?.remoteAddress.map { (connection, $0) } }
        }
    }

    /// Closes the connection in `slot` ("going away", with `reason`), on the loop.
    func close(_ slot: SessionSlot, reason: String) {
        eventLoop.execute { [self] in sessions.value.handler(at: slot)?.closeGoingAway(reason: reason) }
    }
}
