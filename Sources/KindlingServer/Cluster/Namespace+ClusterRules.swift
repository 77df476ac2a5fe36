import Dispatch
import KindlingCore
import NATSClient
import Logging

/// A namespace's own rules in cluster mode (docs/cluster.md): a change is a record of the
/// namespace's log, published by the leader between two writes, so every node puts the rules in
/// force at the same point of the write order, and a node that starts reads them back with the
/// data. Runs on the namespace's queue like the rest of `Namespace`.
extension Namespace {

    /// `setOwnRules` in cluster mode, for rules already loaded and an admin already checked, as
    /// the namespace's admission said: a follower sends them to the leader (which checks them
    /// again), the leader publishes them. `complete` gets `.ok` once the rules are in the log
    /// and in force on this node, on `queue`.
    func setReplicatedRules(
        _ rules: RulesDocument, as auth: AuthState, admission: Admission, complete: @escaping @Sendable (Answer) -> Void
    ) {
        switch admission {
        case .refuse(let refusal):
            complete(.refused(refusal))
        case .decide:
            publishRules(rules) { reply in
                switch reply {
                case .committed: complete(.ok)
                case .refused(let refusal): complete(.refused(refusal))
                }
            }
        case .forward:
            guard let node = cluster else { return complete(.refused(.unavailable(Namespace.notJoined))) }
            let request = ForwardedRules(source: rules.source, auth: auth)
            askLeader(
                request.encoded(), node: node,
                whenLeading: { namespace in
                    var gate = namespace.admissionGate()
                    namespace.setReplicatedRules(
                        rules, as: auth, admission: namespace.admit(.write, from: .rest(auth), through: &gate), complete: complete)
                },
                undecided: { _, refusal in complete(.refused(refusal)) }
            ) { namespace, reply in
                switch reply {
                case .refused(let refusal): complete(.refused(refusal))
                case .committed(let sequence, _):
                    namespace.whenCommitted(
                        sequence, then: { _ in complete(.ok) }, refused: { complete(.refused(.unavailable(Namespace.notJoined))) })
                }
            }
        }
    }

    /// On the leader: puts `rules` in force after the writes committed so far and publishes them
    /// as the next record, once the namespace's admission let the change in. `complete` gets
    /// the record's sequence once JetStream has it, on `queue`.
    func publishRules(_ rules: RulesDocument, complete: @escaping @Sendable (ForwardedAnswer) -> Void) {
        guard let replicated else { return complete(.refused(.unavailable(Namespace.notLeading))) }
        lastSequence += 1
        let sequence = lastSequence
        // Held before the log has the record, so its acknowledgement cannot come first; the
        // events the new rules cause (revoked listens) are held behind it.
        held.send(
            PreparedDispatch(), after: sequence, then: { self.run { _ in complete(.committed(sequence: sequence, pushed: nil)) } },
            refused: { self.run { _ in complete(.refused(.unconfirmed)) } })
        replicated.appendRules(rules.source, sequence: sequence)
        ownRules = rules
        replaceRules(rules, open: false, shared: false)
        logger.notice("rules replaced", metadata: ["record": "\(sequence)"])
    }

    /// The leader's side of a follower's `ForwardedRules`: the admin and the rules are checked
    /// again here, then published. A node that does not lead (or stops leading before the
    /// record is in the log) stays silent, as for a forwarded write, leaving the answer to the
    /// leader.
    func serveForwardedRules(_ request: JSONValue, respond: @escaping @Sendable (ForwardedAnswer) -> Void) {
        let change: ForwardedRules
        do throws(ValidationError) {
            change = try ForwardedRules.decode(request)
        } catch {
            return respond(.refused(.invalid(error)))
        }
        var gate = admissionGate()
        guard case .decide = admit(.write, from: .forwarded(.rest, change.auth), through: &gate) else { return }
        if let refusal = state.refusalOfRulesAccess(by: change.auth) { return respond(.refused(refusal)) }
        switch Namespace.loadRules(change.source) {
        case .success(let rules):
            publishRules(rules) { answer in
                if case .refused(.unconfirmed) = answer { return }
                if case .refused(.unavailable(let message)) = answer, message == Namespace.notLeading { return }
                respond(answer)
            }
        case .failure(let refusal):
            respond(.refused(refusal))
        }
    }

    /// A rules change read from the log: in force from record `sequence` on. Rules that do not
    /// load here (the leader loaded them) stop the reading like any damaged batch.
    func commitRules(_ payload: [UInt8], sequence text: String, streamSequence: UInt64) throws(StorageError) {
        guard let sequence = UInt64(text) else {
            throw StorageError.corrupt("rules record \(streamSequence) of \(ClusterNode.logSubject(name)) names no sequence")
        }
        try checkContinuity(sequence, streamSequence: streamSequence)
        if sequence > lastSequence {
            let rules: RulesDocument
            do throws(RulesError) {
                rules = try RulesDocument.parse(String(decoding: payload, as: UTF8.self), coverage: state.rulesCoverage)
            } catch {
                throw StorageError.corrupt("rules record \(streamSequence) of \(ClusterNode.logSubject(name)) does not load: \(error)")
            }
            ownRules = rules
            replaceRules(rules, open: false, shared: false)
            lastSequence = sequence
            logger.info("rules replaced from the log", metadata: ["record": "\(sequence)"])
        }
        // Answers waiting for this record (a forwarded rules change).
        held.release(through: lastSequence)
    }
}
