import Foundation
import KindlingCore
import KindlingServer
import KindlingTesting
import Testing

@testable import KindlingClient

/// Observers as async sequences: values arrive in order, and the listen ends with the loop.
@Suite(.timeLimit(.minutes(1)))
struct AsyncSequenceTests {
    struct Spot: Codable, Equatable, Sendable {
        var free: Int
    }

    @Test func breakingOutOfTheLoopRemovesTheListen() async throws {
        try await DatabaseTests.withServer { _, url in
            let db = try Database(url: url)
            defer { db.shutdown() }
            let spot = db.reference("spots/a")
            try await spot.setValue(["free": 3])
            var seen: [Int] = []
            for try await value in spot.values(as: Spot.self) {
                seen.append(value.free)
                if value.free == 0 { break }
                try await spot.child("free").setValue(.number(Double(value.free - 1)))
            }
            #expect(seen == [3, 2, 1, 0])
            #expect(try await eventually { db.repo.listenCounts == (0, 0) })
        }
    }

    @Test func cancellingTheConsumingTaskRemovesTheListen() async throws {
        try await DatabaseTests.withServer { _, url in
            let db = try Database(url: url)
            defer { db.shutdown() }
            let ref = db.reference("rooms")
            let first = AsyncStream.makeStream(of: String.self)
            let consumer = Task {
                for try await snapshot in ref.snapshots() { first.continuation.yield(snapshot.description) }
            }
            var iterator = first.stream.makeAsyncIterator()
            #expect(await iterator.next() == "null")
            #expect(db.repo.listenCounts == (1, 1))
            consumer.cancel()
            #expect(try await eventually { db.repo.listenCounts == (0, 0) })
            // The loop ended quietly (a cancelled stream ends, it does not throw).
            try await consumer.value
        }
    }

    @Test func aRefusedListenEndsTheSequenceWithTheServersError() async throws {
        try await DatabaseTests.withServer { server, url in
            server.replaceRules(try RulesDocument.parse(#"{"rules":{".read":false,".write":true}}"#))
            let db = try Database(url: url)
            defer { db.shutdown() }
            await #expect(throws: DatabaseError.self) {
                for try await _ in try db.reference("secret").snapshots() {}
            }
            #expect(try await eventually { db.repo.listenCounts == (0, 0) })
        }
    }
}
