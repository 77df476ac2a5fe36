import KindlingCore
import Logging
import Testing

@testable import KindlingServer

/// A namespace that adopts a cluster snapshot.
struct NamespaceAdoptTests {
    /// Without rules of its own it runs on the server's shared document, so, like any namespace
    /// on it, it takes a copy of its own once busy; with its own rules there is nothing to unshare.
    @Test func aSnapshotWithoutRulesKeepsTheServersRulesShared() async throws {
        let rules = try RulesDocument.parse(#"{"rules":{".read":true,".write":true}}"#)
        let namespace = Namespace(name: "t", logger: Logger(label: "test"), rules: rules, rulesAreOpen: false)
        try await namespace.adopt(ClusterSnapshot(recordSequence: 1, streamSequence: 1, rulesSource: nil, root: .empty))
        #expect(await namespace.state.evaluationsBeforeUnsharing == NamespaceState.evaluationsBeforeUnsharing(rules))
        try await namespace.adopt(ClusterSnapshot(recordSequence: 2, streamSequence: 2, rulesSource: rules.source, root: .empty))
        #expect(await namespace.state.evaluationsBeforeUnsharing == nil)
    }
}
