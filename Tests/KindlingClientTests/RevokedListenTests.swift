import Foundation
import KindlingClient
import KindlingCore
import KindlingServer
import Synchronization
import KindlingTesting
import Testing

/// Listens the server revokes (`c`, when new rules take read access away) against an in-process
/// server: only the revoked query's observers are cancelled, not every query at the path.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct RevokedListenTests {
    /// Cancellation reasons by observer name.
    final class Cancellations: Sendable {
        private let reasons = Mutex<[String: DatabaseError]>([:])

        func callback(_ name: String) -> @Sendable (DatabaseError) -> Void {
            { error in self.reasons.withLock { $0[name] = error } }
        }

        var names: Set<String> { reasons.withLock { Set($0.keys) } }
    }

    func rules(_ text: String) throws -> RulesDocument { try RulesDocument.parse(text) }

    /// A server under `rules` holding `/items` = {"a":1,"b":2}, a writer, and `items` seen
    /// through a second client (the reader whose listens the tests revoke).
    func withItems(rules text: String, _ body: (KindlingServer, Database, DatabaseReference) async throws -> Void) async throws {
        try await DatabaseTests.withServer { server, url in
            server.replaceRules(try rules(text))
            let writer = try Database(url: url)
            let reader = try Database(url: url)
            defer {
                writer.shutdown()
                reader.shutdown()
            }
            try await writer.reference("items").setValue(try JSONParser.parse(#"{"a":1,"b":2}"#))
            try await body(server, writer, reader.reference("items"))
        }
    }

    @Test func aRevokedFilteredQueryLeavesTheOtherQueryAtItsPathLive() async throws {
        try await withItems(rules: #"{"rules":{".write":true,"items":{".read":"query.limitToFirst == 1 || query.limitToLast == 1"}}}"#) {
            server, writer, items in
            let first = Recorder()
            let last = Recorder()
            let cancellations = Cancellations()
            items.queryLimited(toFirst: 1).observeEvents(
                .value, on: first.queue, with: { first.record($0) }, withCancel: cancellations.callback("first"))
            items.queryLimited(toLast: 1).observeEvents(
                .value, on: last.queue, with: { last.record($0) }, withCancel: cancellations.callback("last"))
            try await first.waitForValue(#"{"a":1}"#)
            try await last.waitForValue(#"{"b":2}"#)

            // The server revokes the limitToLast listen only (`q` names it).
            server.replaceRules(try rules(#"{"rules":{".write":true,"items":{".read":"query.limitToFirst == 1"}}}"#))
            #expect(try await eventually { cancellations.names == ["last"] })
            try await writer.reference("items/a").setValue(.number(10))
            try await first.waitForValue(#"{"a":10}"#)
            #expect(cancellations.names == ["last"])
        }
    }

    @Test func aRevokedDefaultListenLeavesAFilteredQueryAtItsPathLive() async throws {
        try await withItems(rules: #"{"rules":{".read":true,".write":true}}"#) { server, writer, items in
            let all = Recorder()
            let first = Recorder()
            let cancellations = Cancellations()
            items.observeEvents(.value, on: all.queue, with: { all.record($0) }, withCancel: cancellations.callback("all"))
            items.queryLimited(toFirst: 1).observeEvents(
                .value, on: first.queue, with: { first.record($0) }, withCancel: cancellations.callback("first"))
            try await all.waitForValue(#"{"a":1,"b":2}"#)
            try await first.waitForValue(#"{"a":1}"#)

            // The default listen (which served both) is revoked; the limited query may still read.
            server.replaceRules(try rules(#"{"rules":{".write":true,"items":{".read":"query.limitToFirst == 1"}}}"#))
            #expect(try await eventually { cancellations.names == ["all"] })
            try await writer.reference("items/a").setValue(.number(10))
            try await first.waitForValue(#"{"a":10}"#)
            #expect(cancellations.names == ["all"])
        }
    }
}
