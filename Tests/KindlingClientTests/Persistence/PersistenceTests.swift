import Foundation
import KindlingClient
import KindlingCore
import KindlingServer
import KindlingTesting
import Testing

/// Persistence as an app meets it: writes made offline survive the process and land once;
/// listeners start from the data they last had, offline too.
@Suite(.timeLimit(.minutes(2)))
struct PersistenceTests {
    /// The folder a test's runs share; an exit test's child finds its parent's by the parent's pid.
    static func folder(for pid: Int32) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("kindling-persistence-\(pid)")
    }

    /// A folder of a test's own, outside the shared one: the killed-process test removes that
    /// while the suite's other tests run beside it, and once took a cache from under the
    /// listeners test (its offline listener never fired).
    static func ownFolder(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("kindling-persistence-\(name)-\(UUID().uuidString)")
    }

    @Test func writesMadeOfflineByAKilledProcessLandOnceEachInOrder() async throws {
        let folder = Self.folder(for: getpid())
        try? FileManager.default.removeItem(at: folder)
        defer { try? FileManager.default.removeItem(at: folder) }
        // The app, in a process of its own: no server reachable (port 1), three writes, then
        // killed before it could send any of them.
        await #expect(processExitsWith: .signal(SIGKILL)) {
            let database = try Database(url: "http://127.0.0.1:1?ns=persist")
            database.persistenceDirectory = PersistenceTests.folder(for: getppid())
            database.isPersistenceEnabled = true
            let room = database.reference("rooms/r1")
            room.child("log").childByAutoId().setValue("first")
            room.child("log").childByAutoId().setValue("second")
            room.child("count").setValue(ServerValue.increment(1))
            kill(getpid(), SIGKILL)
        }
        let kept = try String(contentsOf: folder.appendingPathComponent("writes.log"), encoding: .utf8)
        #expect(kept.split(separator: "\n").count == 3, "\(kept)")
        try await KindlingTesting.withServer(label: "persistence-test") { server in
            // The app runs again, now with the server up: the writes go out once each.
            let database = try Database(url: "http://127.0.0.1:\(server.port)?ns=persist")
            defer { database.shutdown() }
            database.persistenceDirectory = folder
            try database.enablePersistence()
            let reader = try Database(url: "http://127.0.0.1:\(server.port)?ns=persist")
            defer { reader.shutdown() }
            #expect(try await eventually { try await reader.reference("rooms/r1/count").getData().value as? Int == 1 })
            let log = try await reader.reference("rooms/r1/log").getData()
            #expect(log.children.map { $0.value as? String } == ["first", "second"])
            // Once the server's acknowledgements are on disk (the log's `a` lines), a third run
            // sends nothing.
            let logFile = folder.appendingPathComponent("writes.log")
            #expect(
                try await eventually {
                    ((try? String(contentsOf: logFile, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.hasPrefix("a ") }.count == 3
                })
            database.shutdown()
            let third = try Database(url: "http://127.0.0.1:\(server.port)?ns=persist")
            defer { third.shutdown() }
            third.persistenceDirectory = folder
            try third.enablePersistence()
            _ = try await third.reference("other").getData()
            #expect(try await reader.reference("rooms/r1/count").getData().value as? Int == 1)
        }
    }

    @Test func listenersStartFromTheDataTheyLastHadOfflineToo() async throws {
        let folder = Self.ownFolder("listeners")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await KindlingTesting.withServer(label: "persistence-test") { server in
            let online = try Database(url: "http://127.0.0.1:\(server.port)?ns=cache")
            online.persistenceDirectory = folder
            try online.enablePersistence()
            let spots = online.reference("spots")
            try await spots.setValue(["library": ["free": 3], "cafe": ["free": 0]])
            let (values, continuation) = AsyncStream.makeStream(of: String.self)
            spots.observe(.value) { continuation.yield($0.jsonValue.description) }
            var iterator = values.makeAsyncIterator()
            #expect(await iterator.next() == #"{"cafe":{"free":0},"library":{"free":3}}"#)
            online.shutdown()
        }
        // The next run has no server at all: the listener still sees the data at once, and a
        // read answers from it.
        let offline = try Database(url: "http://127.0.0.1:1?ns=cache")
        defer { offline.shutdown() }
        offline.persistenceDirectory = folder
        offline.isPersistenceEnabled = true
        let (values, continuation) = AsyncStream.makeStream(of: String.self)
        offline.reference("spots").observe(.value) { continuation.yield($0.jsonValue.description) }
        var iterator = values.makeAsyncIterator()
        #expect(await iterator.next() == #"{"cafe":{"free":0},"library":{"free":3}}"#)
        #expect(try await offline.reference("spots/library/free").getData().value as? Int == 3)
    }

    @Test func persistenceTurnedOnAfterUseIsRefused() throws {
        let database = try Database(url: "http://127.0.0.1:1?ns=late")
        defer { database.shutdown() }
        database.persistenceDirectory = Self.ownFolder("late")
        defer { try? FileManager.default.removeItem(at: database.persistenceDirectory) }
        database.reference("a").setValue(1, withCompletionBlock: nil)
        #expect(throws: DatabaseError.self) { try database.enablePersistence() }
        #expect(!database.isPersistenceEnabled)
    }
}
