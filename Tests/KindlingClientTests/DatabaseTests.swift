import Foundation
import KindlingClient
import KindlingCore
import KindlingServer
import Logging
import Synchronization
import KindlingTesting
import Testing

/// The SDK against an in-process server over real sockets.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct DatabaseTests {
    static func withServer(_ body: (KindlingServer, String) async throws -> Void) async throws {
        try await KindlingTesting.withServer(label: "kindling-client-test") { server in
            try await body(server, "http://127.0.0.1:\(server.port)?ns=sdk\(UInt32.random(in: 0...UInt32.max))")
        }
    }

    func json(_ text: String) throws -> JSONValue { try JSONParser.parse(text) }

    @Test func setThenGet() async throws {
        try await Self.withServer { _, url in
            let database = try Database(url: url)
            defer { database.shutdown() }
            let ref = database.reference("rooms/a")
            try await ref.setValue(json(#"{"name":"Ada","n":1}"#))
            let snapshot = try await ref.getData()
            #expect(snapshot.exportText == #"{"n":1,"name":"Ada"}"#)
            #expect(snapshot.key == "a")
            try await ref.child("n").removeValue()
            #expect(try await ref.getData().exportText == #"{"name":"Ada"}"#)
            try await ref.updateChildValues(["x/y": .number(2), "name": .string("Bo")])
            #expect(try await ref.getData().exportText == #"{"name":"Bo","x":{"y":2}}"#)
            try await ref.setPriority(.number(5))
            #expect(try await ref.getData().exportText == #"{"name":"Bo","x":{"y":2},".priority":5}"#)
        }
    }

    @Test func twoClientsSeeEachOthersWrites() async throws {
        try await Self.withServer { _, url in
            let alice = try Database(url: url)
            let bob = try Database(url: url)
            defer {
                alice.shutdown()
                bob.shutdown()
            }
            let recorder = Recorder()
            bob.reference("chat").observeEvents(.value, on: recorder.queue) { recorder.record($0) }
            try await recorder.waitForValue("null")
            try await alice.reference("chat/m1").setValue(.string("hi"))
            try await recorder.waitForValue(#"{"m1":"hi"}"#)
            try await bob.reference("chat/m2").setValue(.string("hello"))
            try await recorder.waitForValue(#"{"m1":"hi","m2":"hello"}"#)
        }
    }

    @Test func childEvents() async throws {
        try await Self.withServer { _, url in
            let writer = try Database(url: url)
            let reader = try Database(url: url)
            defer {
                writer.shutdown()
                reader.shutdown()
            }
            try await writer.reference("list").setValue(json(#"{"a":1,"b":2}"#))
            let recorder = Recorder()
            let list = reader.reference("list")
            for type in [DataEventType.childAdded, .childChanged, .childRemoved] {
                list.observeEvents(type, on: recorder.queue) { recorder.record($0) }
            }
            _ = try await recorder.wait { $0.count == 2 }
            try await writer.reference("list/c").setValue(.number(3))
            try await writer.reference("list/a").setValue(.number(10))
            try await writer.reference("list/b").removeValue()
            let events = try await recorder.wait { $0.count == 5 }
            let lines = events.map { "\($0.type.name) \($0.snapshot.key) \($0.snapshot.exportText) \($0.previousSiblingKey ?? "-")" }
            #expect(
                lines == [
                    "child_added a 1 -", "child_added b 2 a", "child_added c 3 b", "child_changed a 10 -",
                    "child_removed b 2 -",
                ])
        }
    }

    @Test func localWritesRaiseEventsAtOnce() async throws {
        try await Self.withServer { _, url in
            let database = try Database(url: url)
            defer { database.shutdown() }
            let recorder = Recorder()
            let ref = database.reference("local")
            ref.observeEvents(.value, on: recorder.queue) { recorder.record($0) }
            try await recorder.waitForValue("null")
            ref.setValue(7, withCompletionBlock: nil)
            // The local event comes before the server has answered.
            try await recorder.waitForValue("7")
        }
    }

    @Test func queriesLimitAndOrder() async throws {
        try await Self.withServer { _, url in
            let database = try Database(url: url)
            defer { database.shutdown() }
            let scores = database.reference("scores")
            try await scores.setValue(json(#"{"a":{"s":3},"b":{"s":1},"c":{"s":2}}"#))
            let recorder = Recorder()
            let query = scores.queryOrdered(byChild: "s").queryLimited(toLast: 2)
            query.observeEvents(.value, on: recorder.queue) { recorder.record($0) }
            try await recorder.waitForValue(#"{"a":{"s":3},"c":{"s":2}}"#)
            try await scores.child("b/s").setValue(.number(9))
            try await recorder.waitForValue(#"{"a":{"s":3},"b":{"s":9}}"#)
            let last = try await recorder.wait { _ in true }.last
            #expect(last?.snapshot.children.map(\.key) == ["a", "b"])
            let fetched = try await scores.queryOrdered(byChild: "s").queryStarting(atValue: .number(3)).getData()
            #expect(fetched.exportText == #"{"a":{"s":3},"b":{"s":9}}"#)
            let equal = try await scores.queryOrdered(byChild: "s").queryEqual(toValue: .number(2)).getData()
            #expect(equal.exportText == #"{"c":{"s":2}}"#)
            // Exclusive bounds, on a child's value and on the key, from the server and from a listener.
            let after = try await scores.queryOrdered(byChild: "s").queryStarting(afterValue: 2).getData()
            #expect(after.exportText == #"{"a":{"s":3},"b":{"s":9}}"#)
            let before = try await scores.queryOrdered(byChild: "s").queryEnding(beforeValue: 9).getData()
            #expect(before.exportText == #"{"a":{"s":3},"c":{"s":2}}"#)
            let keys = scores.queryOrderedByKey().queryStarting(afterValue: "a").queryEnding(beforeValue: "c")
            #expect(try await keys.getData().exportText == #"{"b":{"s":9}}"#)
            let live = Recorder()
            keys.observeEvents(.value, on: live.queue) { live.record($0) }
            try await live.waitForValue(#"{"b":{"s":9}}"#)
        }
    }

    @Test func transactionsFromSeveralClientsLandExactly() async throws {
        try await Self.withServer { _, url in
            let clients = try (0..<20).map { _ in try Database(url: url) }
            defer { clients.forEach { $0.shutdown() } }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in clients {
                    group.addTask {
                        let counter = client.reference("counter")
                        for _ in 0..<1 {
                            let outcome = try await counter.runTransaction { current in
                                .number((current.numberValue ?? 0) + 1)
                            }
                            #expect(outcome.committed)
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await clients[0].reference("counter").getData().jsonValue == .number(20))
            #expect(
                try await clients[2].reference("counter").runTransaction { .number(($0.numberValue ?? 0) + 1) }.snapshot.jsonValue
                    == .number(21))
            let aborted = try await clients[1].reference("counter").runTransactionBlock { _ in .abort() }
            let abortedByNil = try await clients[1].reference("counter").runTransaction { _ in nil }
            #expect(!abortedByNil.committed)
            let doubled = try await clients[3].reference("counter").runTransaction { current in
                .number((current.numberValue ?? 0) * 2)
            }
            #expect(doubled.committed && doubled.snapshot.jsonValue == .number(42))
            try await clients[3].reference("counter").setValue(.number(21))
            #expect(!aborted.committed)
            #expect(aborted.snapshot.jsonValue == .number(21))
        }
    }

    @Test func onDisconnectRunsWhenClientGoesAway() async throws {
        try await Self.withServer { _, url in
            let watcher = try Database(url: url)
            let leaver = try Database(url: url)
            defer {
                watcher.shutdown()
                leaver.shutdown()
            }
            let presence = leaver.reference("presence/ada")
            try await presence.setValue(.bool(true))
            try await presence.onDisconnect.removeValue()
            try await leaver.reference("status").onDisconnect.setValue(.string("gone"))
            try await leaver.reference("cancelled").onDisconnect.setValue(.string("never"))
            try await leaver.reference("cancelled").onDisconnect.cancel()
            let recorder = Recorder()
            watcher.reference().observeEvents(.value, on: recorder.queue) { recorder.record($0) }
            try await recorder.waitForValue(#"{"presence":{"ada":true}}"#)
            leaver.goOffline()
            try await recorder.waitForValue(#"{"status":"gone"}"#)
        }
    }

    @Test func offlineWritesAreSentAfterReconnect() async throws {
        try await Self.withServer { _, url in
            let database = try Database(url: url)
            let other = try Database(url: url)
            defer {
                database.shutdown()
                other.shutdown()
            }
            let connected = Recorder()
            database.reference(".info/connected").observeEvents(.value, on: connected.queue) { connected.record($0) }
            try await connected.waitForValue("true")
            database.goOffline()
            try await connected.waitForValue("false")
            let first = database.reference("offline/a")
            let second = database.reference("offline/b")
            first.setValue(1, withCompletionBlock: nil)
            second.setValue(2, withCompletionBlock: nil)
            first.setValue(3, withCompletionBlock: nil)
            // Shown locally while offline (where the writes make the data complete).
            let local = Recorder()
            first.observeEvents(.value, on: local.queue) { local.record($0) }
            try await local.waitForValue("3")
            let remote = Recorder()
            other.reference("offline").observeEvents(.value, on: remote.queue) { remote.record($0) }
            try await remote.waitForValue("null")
            database.goOnline()
            try await connected.waitForValue("true")
            let events = try await remote.wait { $0.last?.snapshot.exportText == #"{"a":3,"b":2}"# }
            // Sent in order: the last write to /offline/a wins.
            #expect(events.last?.snapshot.exportText == #"{"a":3,"b":2}"#)
            #expect(try await other.reference("offline").getData().exportText == #"{"a":3,"b":2}"#)
        }
    }

    @Test func serverValuesAndPushIDs() async throws {
        try await Self.withServer { _, url in
            let database = try Database(url: url)
            defer { database.shutdown() }
            let list = database.reference("items")
            let first = list.childByAutoId()
            let second = list.childByAutoId()
            #expect(first.key!.count == 20)
            #expect(first.key! < second.key!)
            try await first.setValue(.object([JSONMember("at", ServerValue.timestamp())]))
            try await first.child("n").setValue(ServerValue.increment(2))
            try await first.child("n").setValue(ServerValue.increment(3))
            let snapshot = try await first.getData()
            #expect(snapshot.jsonValue["n"] == .number(5))
            let at = try #require(snapshot.jsonValue["at"]?.numberValue)
            #expect(abs(at - Date().timeIntervalSince1970 * 1000) < 60_000)
        }
    }

    @Test func singleEventsAsyncSequencesAndRemovingObservers() async throws {
        try await Self.withServer { _, url in
            let database = try Database(url: url)
            let writer = try Database(url: url)
            defer {
                database.shutdown()
                writer.shutdown()
            }
            let ref = database.reference("feed")
            try await writer.reference("feed").setValue(json(#"{"a":1}"#))
            let once = Recorder()
            ref.observeSingleEvent(of: .value, on: once.queue) { once.record(DataEvent(type: .value, snapshot: $0, previousSiblingKey: nil)) }
            try await once.waitForValue(#"{"a":1}"#)

            let stream = ref.events(.childAdded)
            var iterator = stream.makeAsyncIterator()
            #expect(await iterator.next()?.snapshot.key == "a")
            try await writer.reference("feed/b").setValue(.number(2))
            let added = await iterator.next()
            #expect(added?.snapshot.key == "b")
            #expect(added?.previousSiblingKey == "a")

            let removed = Recorder()
            let handle = ref.observeEvents(.childAdded, on: removed.queue) { removed.record($0) }
            _ = try await removed.wait { $0.count == 2 }
            ref.removeObserver(withHandle: handle)
            try await writer.reference("feed/c").setValue(.number(3))
            #expect(await iterator.next()?.snapshot.key == "c")
            // Negative check: a window in which the removed observer must NOT be called.
            try await Task.sleep(for: .milliseconds(100))
            #expect(removed.all.count == 2)
            #expect(once.all.count == 1)
        }
    }

    @Test func aKnownLocationFiresAtOnceForANewObserver() async throws {
        try await Self.withServer { _, url in
            let database = try Database(url: url)
            defer { database.shutdown() }
            try await database.reference("known").setValue(json(#"{"x":{"y":1}}"#))
            let parent = Recorder()
            database.reference("known").observeEvents(.value, on: parent.queue) { parent.record($0) }
            try await parent.waitForValue(#"{"x":{"y":1}}"#)
            // Under a location already listened to, the cache answers without the server.
            let child = Recorder()
            database.reference("known/x").observeEvents(.value, on: child.queue) { child.record($0) }
            try await child.waitForValue(#"{"y":1}"#)
        }
    }
}

/// The SDK signed in, against a server enforcing rules.
@Suite(.timeLimit(.minutes(2)))
struct AuthenticatedDatabaseTests {
    /// Lines the observers log, from their queue.
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])

        func append(_ line: String) { lines.withLock { $0.append(line) } }

        var all: [String] { lines.withLock { $0 } }

        var connected: [String] { all.filter { $0.hasPrefix("connected") } }
    }

    /// An unsigned token, accepted by a server in emulator mode.
    static func token(_ uid: String) -> String {
        func encode(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        return encode(#"{"alg":"none","type":"JWT"}"#) + "." + encode(#"{"sub":"\#(uid)","iat":0,"exp":3600}"#) + "."
    }

    @Test func readsAsTheSignedInUserAndIsCancelledWhenSignedOut() async throws {
        var logger = Logger(label: "kindling-client-test")
        logger.logLevel = .critical
        var configuration = ServerConfiguration(port: 0, logger: logger)
        configuration.rules = try RulesDocument.parse(
            #"{"rules":{"notes":{"$uid":{".read":"auth != null && auth.uid === $uid",".write":"auth != null && auth.uid === $uid"}}}}"#)
        let server = try await KindlingServer.start(configuration)
        let database = try Database(url: "http://127.0.0.1:\(server.port)?ns=signed")
        do {
            let mine = database.reference("notes/alice")
            await #expect(throws: DatabaseError.self) { try await mine.setValue(.string("anonymous")) }
            try await database.authenticate(with: Self.token("alice"))
            try await mine.setValue(.string("hello"))
            let values = AsyncStream.makeStream(of: String.self)
            mine.observeEvents(
                .value, with: { values.continuation.yield("value \($0.snapshot.jsonValue)") },
                withCancel: { values.continuation.yield("cancelled \($0)") })
            var events = values.stream.makeAsyncIterator()
            #expect(await events.next()?.hasPrefix("value") == true)
            try await database.authenticate(with: nil)
            let cancelled = await events.next()
            #expect(cancelled?.contains("permission_denied") == true)
            await #expect(throws: DatabaseError.self) { try await database.authenticate(with: "not.a.token") }
        } catch {
            database.shutdown()
            try await server.shutdown()
            throw error
        }
        database.shutdown()
        try await server.shutdown()
    }

    @Test func aCredentialRefusedAfterAReconnectSignsOutAndConnectionObserversSeeIt() async throws {
        var logger = Logger(label: "kindling-client-test")
        logger.logLevel = .critical
        var configuration = ServerConfiguration(port: 0, logger: logger)
        configuration.rules = try RulesDocument.parse(#"{"rules":{"notes":{"$uid":{".read":"auth != null && auth.uid === $uid"}}}}"#)
        // Emulator mode: the unsigned token is taken.
        var server = try await KindlingServer.start(configuration)
        let port = server.port
        let database = try Database(url: "http://127.0.0.1:\(port)?ns=resigned")
        let log = Lines()
        let queue = DispatchQueue(label: "auth-test")
        do {
            database.reference(".info/connected").observeEvents(.value, on: queue) { event in
                log.append("connected \(event.snapshot.jsonValue)")
            }
            try await database.authenticate(with: Self.token("alice"))
            database.reference("notes/alice").observeEvents(
                .value, on: queue, with: { event in log.append("value \(event.snapshot.jsonValue)") },
                withCancel: { error in log.append("cancelled \(error)") })
            #expect(try await eventually { log.all.contains("value null") && log.connected.last == "connected true" })
            let before = log.connected.count

            // The same port, now verifying tokens with no key: the credential resent first thing
            // after the reconnect is refused.
            try await server.shutdown()
            configuration.port = port
            configuration.auth = AuthSettings(emulatorMode: false)
            server = try await KindlingServer.start(configuration)
            // Lost, back, dropped by the client on the refusal, back anonymous.
            let expected = ["connected false", "connected true", "connected false", "connected true"]
            let signedOut = try await eventually {
                Array(log.connected.dropFirst(before)) == expected
                    && log.all.contains { $0.hasPrefix("cancelled") && $0.contains("permission_denied") }
            }
            #expect(signedOut, "\(log.all)")
        } catch {
            database.shutdown()
            _ = try? await server.shutdown()
            throw error
        }
        database.shutdown()
        try await server.shutdown()
    }
}
