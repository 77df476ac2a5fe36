import KindlingCore
import Testing

@testable import KindlingServer

/// Which queued onDisconnect writes a later one replaces: only those it leaves nothing of, and
/// only among writes of a bounded number of locations.
struct OnDisconnectQueueTests {
    static func queue(_ operations: [OnDisconnectQueue.Operation]) -> OnDisconnectQueue {
        var queue = OnDisconnectQueue()
        for operation in operations {
            let locations = operation.locations
            queue.dropOverwritten(by: locations)
            queue.append(operation, bytes: operation.bytes, locations: locations)
        }
        return queue
    }

    static func merge(_ path: String, _ keys: [String]) throws -> OnDisconnectQueue.Operation {
        .merge(try Path(path), keys.map { JSONMember($0, .bool(true)) })
    }

    @Test func aWriteReplacesOnlyWhatItLeavesNothingOf() throws {
        let queue = try Self.queue([
            .put(try Path("/a/b"), 1),
            try Self.merge("/m", ["x", "y"]),
            .put(try Path("/c"), 1),
            // Overwrites /a/b entirely; covers only x of the merge's x and y; /c/d is below /c.
            .put(try Path("/a"), 2),
            try Self.merge("/m", ["x", "z/w"]),
            .put(try Path("/c/d"), 3),
        ])
        #expect(queue.operations.map(\.path.description) == ["/m", "/c", "/a", "/m", "/c/d"])
        #expect(queue.bytes == queue.operations.reduce(0) { $0 + $1.bytes })
        // A merge setting x and y again leaves nothing of the first, nor of the second's x, but
        // the second's z/w stays.
        let again = Self.queue(queue.operations + [try Self.merge("/m", ["y", "x"])])
        #expect(again.operations.map(\.path.description) == ["/c", "/a", "/m", "/c/d", "/m"])
    }

    @Test func wideMergesNeitherReplaceNorAreReplaced() throws {
        let wide = (0...OnDisconnectQueue.Locations.most).map { "k\($0)" }
        let queue = try Self.queue([try Self.merge("/w", wide), try Self.merge("/w", wide), .put(try Path("/w/k0"), 1)])
        #expect(queue.count == 3)
        // A put above everything still replaces what it can compare.
        let covered = try Self.queue([try Self.merge("/w", ["k0"]), .put(try Path("/w"), 1)])
        #expect(covered.count == 1)
    }
}
