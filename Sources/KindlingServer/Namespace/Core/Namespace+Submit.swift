import Dispatch
import KindlingCore
import KindlingProtocol
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// A namespace's realtime requests: each event loop's turn is taken as one block, in order, and
/// the answers its reads make are held against the budget of requests in progress.
extension Namespace {
    /// Handles a connection's inputs, in order, as one block.
    nonisolated func submit(_ connection: ConnectionID, _ inputs: [SessionInput]) {
        submit([(connection, inputs)])
    }

    /// Handles several connections' inputs (one event loop's turn), each connection's in order,
    /// as one block: the writes of all of them go to the log as one append, and their outputs
    /// are held and released together. With `mayRunHere` false the block always joins the
    /// queue, so the caller can go on to other work (another namespace's block) meanwhile.
    /// `parse`, what parsing the inputs took from the budget of requests in progress, is given
    /// back once the block has taken them.
    nonisolated func submit(_ batches: [(ConnectionID, [SessionInput])], mayRunHere: Bool = true, holding parse: BudgetHold? = nil) {
        // When the inputs arrived, for the profiler's records (only while someone profiles).
        let received = profiled.load(ordering: .relaxed) ? ProfileClock.now() : nil
        // Takes the block; `here` when on the caller's thread, which then flushes the log.
        let work: @Sendable (_ here: Bool) -> WriteAheadLog? = { here in
            defer {
                withExtendedLifetime(parse) {}
                self.submitBlocks.subtract(1, ordering: .releasing)
            }
            return self.enter { namespace in namespace.take(batches, received: received, flushingHere: here) }
        }
        // With no submitted block queued or running, the block runs here, on the caller's
        // thread (an event loop), instead of waking a queue thread for it: `sync` keeps it in
        // the queue's order behind anything else queued; the loop then flushes the block's
        // writes to the log itself, once the namespace is free for other blocks
        // (`WriteAheadLog.append(encoded:through:flushingHere:)`). Otherwise the block joins
        // the queue, so a busy namespace never holds an event loop back for long.
        if submitBlocks.add(1, ordering: .acquiring).oldValue == 0, mayRunHere {
            guard let report = queue.sync(execute: { work(true) })?.flushHere() else { return }
            // What waited for the writes is released in a task of its own on this loop (no
            // wake-up), not inside this hand-off: a REST response's promise completed here
            // would run the connection's next request here, which could hand off again.
            if let loop = MultiThreadedEventLoopGroup.currentEventLoop {
                loop.execute(report)
            } else {
                DispatchQueue.global().async(execute: report)
            }
        } else {
            queue.async { _ = work(false) }
        }
    }

    /// Takes one block of submitted inputs, each connection's in order; they arrived at
    /// `received` (`ProfileClock`), when the namespace was profiled then. Returns the log when
    /// the caller is to flush it (`flushingHere`, see `finish`).
    private func take(_ batches: [(ConnectionID, [SessionInput])], received: UInt64?, flushingHere: Bool) -> WriteAheadLog? {
        var block = SubmittedBlock(now: Namespace.now(), gate: admissionGate())
        for (connection, inputs) in batches { take(inputs, from: connection, into: &block) }
        dispatch(block.refusals)
        logRefusals()
        if profile != nil { publishProfile(received: received) }
        flushJournal()
        let owed = finish(block.out, holding: holdForAnswers(of: block), flushingHere: flushingHere)
        if block.gate.askedWrites { settleReservation() }
        if let node = cluster {
            for connection in block.registrationsChanged { persistRegistrations(connection, node: node) }
        }
        return owed
    }

    /// What one submitted block gathers while it takes its inputs.
    private struct SubmittedBlock {
        let now: Int64
        /// The namespace's admission, asked about every operation of the block.
        var gate: AdmissionGate
        var out: [Outgoing] = []
        /// A refusal for failing storage, or of a request that could not be read, changes
        /// nothing, so it need not wait behind writes held for the disk.
        var refusals: [Outgoing] = []
        /// Connections whose onDisconnect registrations changed, each once, in order.
        var registrationsChanged: [ConnectionID] = []
        /// Bytes of the answers to reads in `out`, and what the block took of `answerBudget`
        /// for them (in steps of at least `answerReservation`).
        var answerBytes = 0
        var answersReserved = 0
    }

    /// Takes one connection's inputs, in order, into `block`.
    private func take(_ inputs: [SessionInput], from connection: ConnectionID, into block: inout SubmittedBlock) {
        /// Bytes of the answers to this connection's inputs so far (see `maxAnswerBytes`).
        var answered = 0
        /// Children its queries so far read one by one (see `maxScannedChildren`).
        var scanned = 0
        let forgotten = !forgottenConnections.isEmpty && forgottenConnections.contains(connection)
        // By index: `for input in inputs` copied each input, and binding its operation copied
        // the request's data again.
        for index in inputs.indices {
            // One answer may be larger than the limit (the connection's own limit on waiting
            // bytes decides it, as the socket takes it); what comes after it is not taken.
            if answered > state.limits.maxAnswerBytes, case .webSocket(let outbound)? = outbounds[connection] {
                // Closed before the block's outputs reach its loop, so they are dropped there.
                let reason = "requests asked for more than \(state.limits.maxAnswerBytes) bytes at once"
                logger.warning("closing a connection whose \(reason)", metadata: ["connection": "\(connection)"])
                outbound.close(reason: reason)
                return
            }
            guard case .operation(let number, let operation) = inputs[index] else {
                // A request that could not be read is answered with why, as a read would be.
                if case .decide = admit(.read, from: .realtime(connection), forgotten: forgotten, through: &block.gate) {
                    state.handle(inputs[index], from: connection, now: block.now, into: &block.refusals)
                }
                continue
            }
            var refusal: Refusal?
            switch admit(operation.admission, from: .realtime(connection), forgotten: forgotten, through: &block.gate) {
            case .refuse(let reason):
                refusal = reason
            case .forward:
                // The leader decides, and the answer comes once this node has committed the
                // write from the log. (The operation is bound once here: each binding of it
                // copies a large value.)
                if let (node, write) = forwarding(operation, by: .realtime(connection)) {
                    forward(write, node: node) { answer in
                        guard let number else { return }
                        self.run { $0.dispatch([Outgoing(to: connection, answer: answer, number: number)]) }
                    }
                    continue
                }
                refusal = .unavailable(Namespace.notLeading)
            case .decide:
                break
            }
            if let refusal {
                state.count(operation, by: .realtime(connection), refusal: refusal)
                if let number { block.refusals.append(Outgoing(to: connection, message: Answer.refused(refusal).wireResponse(number))) }
                continue
            }
            switch operation {
            case .get(let path, let query), .listen(let path, let query, _, _, _):
                // A query past the batch's share of scanning is refused (`too_big`), not the
                // connection closed: an SDK sends all its listens again when it reconnects.
                let cost = state.database.scanCost(path, query: query)
                if cost > 0, scanned > 0, scanned + cost > state.limits.maxScannedChildren {
                    let refusal = Refusal.limitExceeded(
                        "The queries of one batch may scan at most \(state.limits.maxScannedChildren) children where no index answers them; declare .indexOn where queries order large locations"
                    )
                    state.count(operation, by: .realtime(connection), refusal: refusal)
                    if let number { block.refusals.append(Outgoing(to: connection, message: Answer.refused(refusal).wireResponse(number))) }
                    continue
                }
                scanned += cost
            default: break
            }
            if operation.changesRegistrations, !block.registrationsChanged.contains(connection) {
                block.registrationsChanged.append(connection)
            }
            let before = block.out.count
            let answer = state.handle(operation, number: number, from: connection, now: block.now, into: &block.out)
            if case .authenticated(let auth) = answer, let expiresAt = auth.expiresAt {
                expire(connection, at: expiresAt)
            }
            journal(operation, answer: answer, of: connection)
            var answers = 0
            for outgoing in block.out[before...] {
                if case .one(connection) = outgoing.recipients, case .bytes(let bytes) = outgoing.content { answers += bytes.count }
            }
            answered += answers
            // Twice: until the block ends, an answer is both its encoded bytes and its frames.
            if operation.isRead, !holdAnswers(2 * answers, of: connection, in: &block, from: before) { return }
        }
    }

    /// What a block's answers hold of `answerBudget` until their loops have taken them: their
    /// bytes, the rest of what the block reserved in steps given back now (a block of small
    /// reads would otherwise keep a whole step while it waits for a sync).
    private func holdForAnswers(of block: SubmittedBlock) -> BudgetHold? {
        guard block.answersReserved > 0, let budget = answerBudget else { return nil }
        budget.release(block.answersReserved - block.answerBytes)
        return block.answerBytes > 0 ? BudgetHold(taken: block.answerBytes, from: budget) : nil
    }

    /// Holds a read's answers (`block.out` from `start` on, taking `bytes` to `connection`)
    /// against the budget of requests in progress. When the budget cannot hold them, they
    /// are dropped unsent and the connection is closed with its reason (nothing of a read
    /// changed anything, so dropping its answers loses nothing; the SDK reconnects, listens and
    /// reads again); false then, and the connection's later requests are not taken. An answer
    /// the budget could never hold goes out unheld, as before there was one: refusing it would
    /// have the SDK read it again for ever, and the reader's own limit on waiting bytes
    /// (`--max-pending-bytes`) still applies to it.
    private func holdAnswers(_ bytes: Int, of connection: ConnectionID, in block: inout SubmittedBlock, from start: Int) -> Bool {
        guard bytes > 0, let budget = answerBudget, bytes <= budget.limit else { return true }
        block.answerBytes += bytes
        let needed = block.answerBytes - block.answersReserved
        guard needed > 0 else { return true }
        let step = max(needed, Self.answerReservation)
        if budget.reserve(step) {
            block.answersReserved += step
            return true
        }
        if step > needed, budget.reserve(needed) {
            block.answersReserved += needed
            return true
        }
        block.answerBytes -= bytes
        block.out.removeSubrange(start...)
        if case .webSocket(let outbound)? = outbounds[connection] {
            let reason = "server busy: too many answers in progress; retry later"
            logger.warning("closing a connection: \(reason) (budget \(budget.limit) bytes)", metadata: ["connection": "\(connection)"])
            outbound.close(reason: reason)
        }
        return false
    }
}
