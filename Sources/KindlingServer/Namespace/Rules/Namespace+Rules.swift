import Dispatch
import KindlingCore
import Logging
import NIOCore

/// A namespace's rules: the server's (`--rules`), or its own, set by an admin over
/// `/.settings/rules.json` and stored with its data (or, in cluster mode, in its log); reading
/// them, and simulating a request against them. Runs on the namespace's queue like the rest of
/// `Namespace`.
extension Namespace {

    /// Puts the server's default rules in force here, unless the namespace has rules of its own.
    nonisolated func useDefaultRules(_ rules: RulesDocument, open: Bool) {
        run { namespace in
            namespace.serverRules = (rules, open)
            guard namespace.ownRules == nil else { return }
            namespace.replaceRules(rules, open: open, shared: true)
        }
    }

    /// The rules in force, as they were given, for an admin (`.encoded`). Ends one use.
    nonisolated func rulesSource(as auth: AuthState, promise: EventLoopPromise<Answer>) {
        run { namespace in
            defer { namespace.release() }
            guard namespace.admitsRulesRead(by: auth, promise: promise) else { return }
            namespace.answerRules(promise, .encoded(Array(namespace.state.rules.source.utf8)))
        }
    }

    /// The largest rules document taken (the hosted service's limit for a rules file).
    static let maxRulesBytes = 256 * 1024

    /// Loads a rules document a client sent (its own rules, or a draft to simulate): at most
    /// `maxRulesBytes`, refused with the load error's line and column when it does not load;
    /// loaded for rules coverage when `coverage` (rules to put in force under `--rules-coverage`).
    static func loadRules(_ text: String, coverage: Bool = false) -> Result<RulesDocument, Refusal> {
        guard text.utf8.count <= maxRulesBytes else {
            return .failure(.limitExceeded("A rules document may be at most \(maxRulesBytes) bytes"))
        }
        do throws(RulesError) {
            return .success(try RulesDocument.parse(text, coverage: coverage))
        } catch {
            return .failure(.invalidRules(error.description))
        }
    }

    /// Puts rules of this namespace's own in force, for an admin: loaded (refused with their
    /// line and column when they do not), stored in its data directory first so a restart keeps
    /// them. Changes nothing when any step fails. Ends one use.
    nonisolated func setOwnRules(_ text: String, as auth: AuthState, promise: EventLoopPromise<Answer>) {
        run { namespace in
            defer { namespace.release() }
            // A rules change is a write: rules are stored with the namespace's data (they make
            // it exist), and in cluster mode the leader puts them in its log.
            var gate = namespace.admissionGate()
            defer { if gate.askedWrites { namespace.settleReservation() } }
            let admission = namespace.admit(.write, from: .rest(auth), through: &gate)
            if case .refuse(let refusal) = admission { return namespace.answerRules(promise, .refused(refusal)) }
            if let refusal = namespace.state.refusalOfRulesAccess(by: auth) { return namespace.answerRules(promise, .refused(refusal)) }
            let rules: RulesDocument
            switch Namespace.loadRules(text, coverage: namespace.state.rulesCoverage) {
            case .success(let loaded): rules = loaded
            case .failure(let refusal): return namespace.answerRules(promise, .refused(refusal))
            }
            if namespace.cluster != nil {
                return namespace.setReplicatedRules(rules, as: auth, admission: admission) { answer in
                    namespace.run { $0.answerRules(promise, answer) }
                }
            }
            namespace.claim()
            if let rulesFile = namespace.durability.disk?.rulesFile {
                do {
                    try rulesFile.save(rules.source)
                } catch {
                    namespace.logger.error("could not store the namespace's rules: \(error)")
                    return namespace.answerRules(promise, .refused(.unavailable("The rules could not be stored: \(error)")))
                }
            }
            namespace.ownRules = rules
            namespace.replaceRules(rules, open: false, shared: false)
            namespace.logger.notice("rules replaced")
            namespace.answerRules(promise, .ok)
        }
    }

    /// Runs a rules simulation for an admin against the data now and the rules in force (or the
    /// simulation's own): answers the encoded decision and its trace. Ends one use.
    nonisolated func simulateRules(_ simulation: RulesSimulation, as auth: AuthState, promise: EventLoopPromise<Answer>) {
        run { namespace in
            defer { namespace.release() }
            guard namespace.admitsRulesRead(by: auth, promise: promise) else { return }
            var rules = namespace.state.rules
            if let text = simulation.rulesText {
                switch Namespace.loadRules(text) {
                case .success(let draft): rules = draft
                case .failure(let refusal): return namespace.answerRules(promise, .refused(refusal))
                }
            }
            do throws(ValidationError) {
                let decision = try simulation.run(rules: rules, root: namespace.state.database.tree.root, now: Namespace.now())
                namespace.answerRules(promise, .encoded(RulesSimulation.encode(decision)))
            } catch {
                namespace.answerRules(promise, .refused(.invalid(error)))
            }
        }
    }

    /// Whether `auth` may read the rules (or simulate them) now: through the namespace's
    /// admission, then as an admin; a refusal is answered on `promise`.
    private func admitsRulesRead(by auth: AuthState, promise: EventLoopPromise<Answer>) -> Bool {
        var gate = admissionGate()
        if case .refuse(let refusal) = admit(.read, from: .rest(auth), through: &gate) {
            answerRules(promise, .refused(refusal))
            return false
        }
        if let refusal = state.refusalOfRulesAccess(by: auth) {
            answerRules(promise, .refused(refusal))
            return false
        }
        return true
    }

    /// Answers a rules request (read, set, simulate) and counts it as `rules`, as the checkpoint
    /// counts every other request.
    func answerRules(_ promise: EventLoopPromise<Answer>, _ answer: Answer) {
        let refusal: Refusal? = if case .refused(let refusal) = answer { refusal } else { nil }
        state.tally.record(.rules, RequestOutcome(refusal))
        report()
        promise.succeed(answer)
    }

    /// Loads rules stored by an earlier `setOwnRules`.
    func loadOwnRules() {
        guard let text = durability.disk?.rulesFile.load() else { return }
        do throws(RulesError) {
            let rules = try RulesDocument.parse(text, coverage: state.rulesCoverage)
            ownRules = rules
            replaceRules(rules, open: false, shared: false)
        } catch {
            logger.error("the namespace's stored rules do not load; the server's rules apply: \(error)")
        }
    }

    /// Puts `rules` in force (`shared`: the server's document).
    func replaceRules(_ rules: RulesDocument, open: Bool, shared: Bool) {
        var out: [Outgoing] = []
        let ended = state.replaceRules(rules, open: open, shared: shared, now: Namespace.now(), into: &out)
        for stream in ended {
            // The stream's use of the namespace ends here: its later closeStream finds nothing.
            if case .eventStream(let outbound)? = outbounds.removeValue(forKey: stream) {
                outbound.end(with: EventStreamEncoding.cancel)
                release()
            }
        }
        finish(out)
    }
}
