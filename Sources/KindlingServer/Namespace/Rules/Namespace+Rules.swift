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
    func useDefaultRules(_ rules: RulesDocument, open: Bool) {
        queue.async {
            self.serverRules = (rules, open)
            guard self.ownRules == nil else { return }
            self.replaceRules(rules, open: open, shared: true)
        }
    }

    /// The rules in force, as they were given, for an admin (`.encoded`). Ends one use.
    func rulesSource(as auth: AuthState, promise: EventLoopPromise<Answer>) {
        queue.async {
            defer { self.release() }
            var gate = self.admissionGate()
            if case .refuse(let refusal) = gate.admit(.read, from: .rest(auth)) { return self.answerRules(promise, .refused(refusal)) }
            if let refusal = self.state.refusalOfRulesAccess(by: auth) { return self.answerRules(promise, .refused(refusal)) }
            self.answerRules(promise, .encoded(Array(self.state.rules.source.utf8)))
        }
    }

    /// The largest rules document taken (the hosted service's limit for a rules file).
    static let maxRulesBytes = 256 * 1024

    /// Loads a rules document a client sent (its own rules, or a draft to simulate): at most
    /// `maxRulesBytes`, refused with the load error's line and column when it does not load.
    static func loadRules(_ text: String) -> Result<RulesDocument, Refusal> {
        guard text.utf8.count <= maxRulesBytes else {
            return .failure(.limitExceeded("A rules document may be at most \(maxRulesBytes) bytes"))
        }
        do throws(RulesError) {
            return .success(try RulesDocument.parse(text))
        } catch {
            return .failure(.invalidRules(error.description))
        }
    }

    /// Puts rules of this namespace's own in force, for an admin: loaded (refused with their
    /// line and column when they do not), stored in its data directory first so a restart keeps
    /// them. Changes nothing when any step fails. Ends one use.
    func setOwnRules(_ text: String, as auth: AuthState, promise: EventLoopPromise<Answer>) {
        queue.async {
            defer { self.release() }
            // A rules change is a write: rules are stored with the namespace's data (they make
            // it exist), and in cluster mode the leader puts them in its log.
            var gate = self.admissionGate()
            defer { if gate.askedWrites { self.settleReservation() } }
            let admission = gate.admit(.write, from: .rest(auth))
            if case .refuse(let refusal) = admission { return self.answerRules(promise, .refused(refusal)) }
            if let refusal = self.state.refusalOfRulesAccess(by: auth) { return self.answerRules(promise, .refused(refusal)) }
            let rules: RulesDocument
            switch Namespace.loadRules(text) {
            case .success(let loaded): rules = loaded
            case .failure(let refusal): return self.answerRules(promise, .refused(refusal))
            }
            if self.cluster != nil { return self.setReplicatedRules(rules, as: auth, admission: admission) { self.answerRules(promise, $0) } }
            self.claim()
            if let rulesFile = self.rulesFile {
                do {
                    try rulesFile.save(rules.source)
                } catch {
                    self.logger.error("could not store the namespace's rules: \(error)")
                    return self.answerRules(promise, .refused(.unavailable("The rules could not be stored: \(error)")))
                }
            }
            self.ownRules = rules
            self.replaceRules(rules, open: false, shared: false)
            self.logger.notice("rules replaced")
            self.answerRules(promise, .ok)
        }
    }

    /// Runs a rules simulation for an admin against the data now and the rules in force (or the
    /// simulation's own): answers the encoded decision and its trace. Ends one use.
    func simulateRules(_ simulation: RulesSimulation, as auth: AuthState, promise: EventLoopPromise<Answer>) {
        queue.async {
            defer { self.release() }
            var gate = self.admissionGate()
            if case .refuse(let refusal) = gate.admit(.read, from: .rest(auth)) { return self.answerRules(promise, .refused(refusal)) }
            if let refusal = self.state.refusalOfRulesAccess(by: auth) { return self.answerRules(promise, .refused(refusal)) }
            var rules = self.state.rules
            if let text = simulation.rulesText {
                switch Namespace.loadRules(text) {
                case .success(let draft): rules = draft
                case .failure(let refusal): return self.answerRules(promise, .refused(refusal))
                }
            }
            do throws(ValidationError) {
                let decision = try simulation.run(rules: rules, root: self.state.database.tree.root, now: Namespace.now())
                self.answerRules(promise, .encoded(RulesSimulation.encode(decision)))
            } catch {
                self.answerRules(promise, .refused(.invalid(error)))
            }
        }
    }

    /// Answers a rules request (read, set, simulate) and counts it as `rules`, as the checkpoint
    /// counts every other request; confined to `queue`.
    func answerRules(_ promise: EventLoopPromise<Answer>, _ answer: Answer) {
        let refusal: Refusal? = if case .refused(let refusal) = answer { refusal } else { nil }
        state.tally.record(.rules, RequestOutcome(refusal))
        report()
        promise.succeed(answer)
    }

    /// Loads rules stored by an earlier `setOwnRules`; confined to `queue`.
    func loadOwnRules() {
        guard let rulesFile, let text = rulesFile.load() else { return }
        do throws(RulesError) {
            let rules = try RulesDocument.parse(text)
            ownRules = rules
            replaceRules(rules, open: false, shared: false)
        } catch {
            logger.error("the namespace's stored rules do not load; the server's rules apply: \(error)")
        }
    }

    /// Puts `rules` in force (`shared`: the server's document). Confined to `queue`.
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
