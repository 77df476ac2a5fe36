import KindlingCore
import Testing

@testable import KindlingServer

/// A namespace's rules coverage (`--rules-coverage`) in the checkpoint: every decision on a
/// request counts, and nothing else does; it survives the namespace taking its own copy of the
/// server's rules and starts again when the rules change; off, the rules carry no probes at all.
struct NamespaceStateCoverageTests {
    static let rules = #"{"rules": {".write": true, "open": {".read": "now >= 0"}, "closed": {".read": "auth != null"}}}"#

    static func get(_ state: inout NamespaceState, _ path: String, as auth: AuthState = .anonymous) throws -> Bool {
        var out: [Outgoing] = []
        if case .refused = state.apply(.get(path: try Path(path), query: Query()), by: .rest(auth), now: 0, into: &out) { return false }
        return true
    }

    static func evaluations(_ state: NamespaceState, _ text: String) -> Int? {
        guard let coverage = state.coverage, let site = coverage.sites.firstIndex(where: { $0.text == text }) else { return nil }
        return coverage.counts[site].evaluations
    }

    @Test func everyDecisionCountsThroughTheCopyOfTheServersRules() throws {
        let shared = try RulesDocument.parse(Self.rules)
        var state = NamespaceState(name: "t", rules: shared, rulesAreOpen: false, rulesShared: true, rulesCoverage: true)
        #expect(state.rules.coverageSites != nil, "the rules are loaded for coverage")
        let evaluations = NamespaceState.evaluationsBeforeUnsharing(shared)
        for _ in 0..<(evaluations + 10) { #expect(try Self.get(&state, "/open")) }
        #expect(state.evaluationsBeforeUnsharing == nil, "the namespace took its own copy")
        #expect(state.rules.coverageSites != nil)
        #expect(Self.evaluations(state, "now >= 0") == evaluations + 10)
        // An admin is not subject to rules: nothing counts.
        #expect(try Self.get(&state, "/closed", as: .admin))
        #expect(Self.evaluations(state, "auth != null") == 0)
        #expect(try !Self.get(&state, "/closed"))
        #expect(Self.evaluations(state, "auth != null") == 1)
        state.resetCoverage()
        #expect(state.coverage?.summary.evaluated == 0)
    }

    @Test func newRulesStartFromNothingAndReChecksDoNotCount() throws {
        var state = NamespaceState(name: "t", rules: try RulesDocument.parse(Self.rules), rulesAreOpen: false, rulesCoverage: true)
        let connection = ConnectionID(value: 7)
        state.connect(connection)
        var out: [Outgoing] = []
        let listen = state.apply(
            .listen(path: try Path("/open"), query: Query(), tag: nil, hash: "", wireQuery: nil), by: .realtime(connection), now: 0, into: &out)
        guard case .ok = listen else {
            Issue.record("the listen was refused: \(listen)")
            return
        }
        #expect(Self.evaluations(state, "now >= 0") == 1)
        // The live listen is checked again under the new rules; that answers no request.
        _ = state.replaceRules(try RulesDocument.parse(Self.rules), open: false, shared: false, now: 0, into: &out)
        #expect(state.rules.coverageSites != nil)
        #expect(state.coverage?.summary.evaluated == 0)
    }

    @Test func withoutCoverageTheRulesHaveNoProbes() throws {
        var state = NamespaceState(name: "t", rules: try RulesDocument.parse(Self.rules), rulesAreOpen: false)
        #expect(try Self.get(&state, "/open"))
        #expect(state.coverage == nil && state.rules.coverageSites == nil)
        var out: [Outgoing] = []
        _ = state.replaceRules(try RulesDocument.parse(Self.rules, coverage: true).instrumented(), open: false, shared: false, now: 0, into: &out)
        #expect(state.coverage == nil)
    }
}
