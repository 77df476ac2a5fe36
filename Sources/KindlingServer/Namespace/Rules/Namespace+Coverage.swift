import KindlingCore
import NIOCore

/// A namespace's rules coverage (`/.inspect/coverage.json` and `/.inspect/coverage`): what the
/// rules in force evaluated for requests since they were put in force or last reset. Runs on the
/// namespace's queue like the rest of `Namespace`; the report is rendered by the caller, off it.
extension Namespace {
    /// The coverage recorded here, as it is now; with `reset` it then starts again from nothing
    /// (so a `DELETE` answers the coverage it cleared). The endpoint decides who may ask; the
    /// namespace's admission runs here, as a read (it changes no data, and in cluster mode each
    /// node answers for the rules it evaluated). Ends one use.
    nonisolated func rulesCoverage(reset: Bool, as auth: AuthState, promise: EventLoopPromise<Result<RulesCoverageReport, Refusal>>) {
        run { namespace in
            defer { namespace.release() }
            var gate = namespace.admissionGate()
            if case .refuse(let refusal) = namespace.admit(.read, from: .rest(auth), through: &gate) {
                return namespace.answerCoverage(promise, .failure(refusal))
            }
            guard let coverage = namespace.state.coverage else {
                return namespace.answerCoverage(promise, .failure(.unavailable(RulesCoverageReport.off)))
            }
            if reset { namespace.state.resetCoverage() }
            let report = RulesCoverageReport(namespace: namespace.name, source: namespace.state.rules.source, coverage: coverage)
            namespace.answerCoverage(promise, .success(report))
        }
    }

    /// Answers a coverage request and counts it as a `rules` request, as `answerRules` does.
    private func answerCoverage(_ promise: EventLoopPromise<Result<RulesCoverageReport, Refusal>>, _ result: Result<RulesCoverageReport, Refusal>) {
        let refusal: Refusal? = if case .failure(let refusal) = result { refusal } else { nil }
        state.tally.record(.rules, RequestOutcome(refusal))
        report()
        promise.succeed(result)
    }
}
