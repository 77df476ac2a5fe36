import Foundation
import KindlingCore
import KindlingProtocol
import Testing

@testable import KindlingClient

/// The disk store on its own: writes kept in order until acknowledged, a torn line dropped,
/// cached data read back.
struct PersistentStoreTests {
    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("kindling-store-\(UUID().uuidString)")
    }

    @Test func writesStayInOrderUntilAcknowledged() throws {
        let directory = Self.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try PersistentStore(directory: directory, cacheLimit: 1 << 20)
        let a = try Path("rooms/a")
        let first = store.record(.put(path: a, data: 1, hash: nil))
        let second = store.record(.merge(path: .root, data: [JSONMember("x/y", "z")]))
        let third = store.record(.put(path: a, data: 3, hash: nil))
        store.acknowledge(second)
        store.close()

        let reopened = try PersistentStore(directory: directory, cacheLimit: 1 << 20)
        #expect(reopened.pendingWrites.map(\.token) == [first, third])
        #expect(reopened.pendingWrites.map(\.action) == [.put(path: a, data: 1, hash: nil), .put(path: a, data: 3, hash: nil)])
        // New writes number on from the kept ones.
        #expect(reopened.record(.put(path: a, data: 4, hash: nil)) > third)
        reopened.close()
    }

    @Test func aTornLastLineIsDropped() throws {
        let text = """
            w 1 {"t":"d","d":{"r":1,"a":"p","b":{"p":"/a","d":1}}}
            w 2 {"t":"d","d":{"r":2,"a":"p","b":{"p":"/b","d":2}}}
            a 1
            w 3 {"t":"d","d":{"r":3,"a":"p","b":{"p":"/c",
            """
        let writes = PersistentStore.unacknowledged(in: text)
        #expect(writes.map(\.token) == [2])
    }

    @Test func cachedDataIsReadBack() throws {
        let directory = Self.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try PersistentStore(directory: directory, cacheLimit: 1 << 20)
        let path = try Path("rooms")
        let node = try Node(json: ["a": 1, "b": ["c": true]])
        store.store([(path, "default", node)], active: [])
        store.close()
        let reopened = try PersistentStore(directory: directory, cacheLimit: 1 << 20)
        #expect(reopened.cached(path: path, queryID: "default")?.hash == node.hash)
        #expect(reopened.cached(path: path, queryID: "other") == nil)
        reopened.close()
    }

    @Test func theCacheKeepsToItsLimitDroppingInactiveLocationsFirst() throws {
        let directory = Self.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try PersistentStore(directory: directory, cacheLimit: 4096)
        let big = try Node(json: .string(String(repeating: "x", count: 3000)))
        let kept = try Path("kept")
        store.store([(try Path("old"), "default", big)], active: [])
        store.store([(kept, "default", big)], active: [PersistentStore.key(path: kept, queryID: "default")])
        #expect(store.cached(path: kept, queryID: "default") != nil)
        #expect(store.cached(path: try Path("old"), queryID: "default") == nil)
        store.close()
    }
}
