import Dispatch
import KindlingCore
import NIOCore

/// REST requests and event streams: each one block on the namespace's queue, decided by the
/// same checkpoint as a realtime connection's requests (`NamespaceState.apply`).
extension Namespace {
    /// Runs one REST request. The answer is given once everything it depends on is durable
    /// (a read never shows a write that a crash could still erase), and a write's changes are
    /// handed to the listeners' sinks before it, so a client that waits for the HTTP response
    /// finds the event already on its way. Ends one use of the namespace.
    /// `ticket` says when the request arrived and from where, while the namespace is profiled.
    nonisolated func perform(
        _ operation: Operation, as auth: AuthState, connection: ConnectionID? = nil, ticket: ProfileTicket? = nil,
        promise: EventLoopPromise<Answer>
    ) {
        run { namespace in
            defer { namespace.release() }
            namespace.serve(operation, by: .rest(auth), connection: connection, ticket: ticket) { promise.succeed($0) }
        }
    }

    /// Serves one request that is not part of a realtime block (a REST request, a follower's
    /// client's write once this node leads): through the namespace's admission, then refused,
    /// forwarded to the leader, or decided here. `complete` gets the answer once everything it
    /// depends on is durable (from the log's thread, or at once).
    ///
    /// `writeID` is a forwarded write's id (`ForwardedWrite.id`), kept with its record when it is
    /// decided here.
    func serve(
        _ operation: Operation, by caller: Caller, connection: ConnectionID? = nil, ticket: ProfileTicket? = nil, writeID: String? = nil,
        complete: @escaping @Sendable (Answer) -> Void
    ) {
        var gate = admissionGate()
        // After the write (which claims the namespace), or its refusal.
        defer { if gate.askedWrites { settleReservation() } }
        switch admit(operation.admission, from: caller, through: &gate) {
        case .refuse(let refusal):
            refuse(operation, by: caller, refusal, connection: connection)
            complete(.refused(refusal))
        case .forward:
            if let (node, write) = forwarding(operation, by: caller) {
                forward(write, node: node, complete: complete)
            } else {
                refuse(operation, by: caller, .unavailable(Namespace.notLeading), connection: connection)
                complete(.refused(.unavailable(Namespace.notLeading)))
            }
        case .decide:
            decide(operation, by: caller, connection: connection, ticket: ticket, writeID: writeID, complete: complete)
        }
    }

    /// Counts and logs a request the admission refused.
    func refuse(_ operation: Operation, by caller: Caller, _ refusal: Refusal, connection: ConnectionID? = nil) {
        state.count(operation, by: caller, refusal: refusal)
        logRefusals(connection: connection)
        report()
    }

    /// Decides an admitted request here, through the checkpoint (`NamespaceState.apply`);
    /// `complete` gets the answer once everything it depends on is durable.
    ///
    /// A cluster leader deposed before the write reached the log (so surely not stored) serves
    /// the request again when another node wrote the log: once this node has read the log (the
    /// block runs when the queue resumes), it forwards the write to whoever leads, or decides it
    /// if it leads again, as if it came then. Cut off (its lease lapsed), it answers at once
    /// that nothing was written (503), rather than keep the client until it can read the log.
    private func decide(
        _ operation: Operation, by caller: Caller, connection: ConnectionID?, ticket: ProfileTicket?, writeID: String?,
        complete: @escaping @Sendable (Answer) -> Void
    ) {
        var out: [Outgoing] = []
        let answer = state.apply(operation, by: caller, now: Namespace.now(), into: &out)
        logRefusals(connection: connection)
        if profile != nil { publishProfile(received: ticket?.received, client: ticket?.client) }
        let lost = operation.writesNow ? Refusal.unconfirmed : .unavailable(Namespace.notLeading)
        finish(
            out, writeID: writeID, then: { complete(answer) }, refused: { complete(.refused(lost)) },
            unstored: { unstored in
                // A follower's forwarded write is sent again by its follower, with its id: sent
                // from here as well, it could be applied twice.
                guard writeID == nil, unstored.superseded else { return complete(.refused(.unavailable(Namespace.notLeading))) }
                self.run { namespace in namespace.serve(operation, by: caller, connection: connection, complete: complete) }
            })
    }

    /// Opens an event stream if `auth` may read there: its first event (the whole location)
    /// goes to `outbound` before the answer, which the stream holds until its head is written.
    nonisolated func openStream(
        _ stream: ConnectionID, at path: Path, query: Query, format: JSONFormat, as auth: AuthState, outbound: EventStreamOutbound,
        ticket: ProfileTicket? = nil, promise: EventLoopPromise<Answer>
    ) {
        run { namespace in
            let operation = Operation.openStream(path: path, query: query, format: format)
            var gate = namespace.admissionGate()
            if case .refuse(let refusal) = namespace.admit(operation.admission, from: .stream(stream, auth), through: &gate) {
                namespace.refuse(operation, by: .stream(stream, auth), refusal)
                namespace.release()
                return promise.succeed(.refused(refusal))
            }
            namespace.outbounds[stream] = .eventStream(outbound)
            var out: [Outgoing] = []
            var answer = namespace.state.apply(operation, by: .stream(stream, auth), now: Namespace.now(), into: &out)
            // The first event (the whole location) is held like a realtime read's answer,
            // counted twice (its bytes, then its chunk), until the stream's socket has it.
            let hold = namespace.answerBudget?.hold(answer: 2 * out.reduce(0) { $0 + $1.message.count }) ?? .unheld
            if case .refused = hold {
                out.removeAll()
                namespace.state.closeStream(stream)
                answer = .refused(AnswerHold.busy)
            }
            if case .refused = answer {
                namespace.outbounds[stream] = nil
                namespace.release()  // no closeStream follows
            }
            namespace.logRefusals()
            if namespace.profile != nil { namespace.publishProfile(received: ticket?.received, client: ticket?.client) }
            let result = answer
            namespace.finish(
                out, holdingUntilWritten: hold.taken.map { (outbound, $0) }, then: { promise.succeed(result) },
                refused: { promise.succeed(.refused(.unavailable(Namespace.notLeading))) })
        }
    }

    /// Forgets an event stream that ended.
    nonisolated func closeStream(_ stream: ConnectionID) {
        run { namespace in
            guard namespace.outbounds.removeValue(forKey: stream) != nil else { return }  // refused, or closed
            namespace.state.closeStream(stream)
            namespace.report()
            namespace.release()
        }
    }
}
