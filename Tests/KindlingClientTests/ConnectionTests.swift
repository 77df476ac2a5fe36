import Foundation
import KindlingCore
import KindlingServer
import Logging
import KindlingTesting
import Testing

@testable import KindlingClient

/// The connection's life: splitting, back-off, and reconnecting to a restarted server.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ConnectionTests {
    @Test func longMessagesAreSplitIntoCountedPieces() {
        #expect(WebSocketConnection.frames(for: "short") == ["short"])
        let long = String(repeating: "é", count: 16_384) + "😀" + "abc"
        let frames = WebSocketConnection.frames(for: long)
        #expect(frames.first == "2")
        #expect(frames.dropFirst().joined() == long)
        #expect(frames.dropFirst().allSatisfy { $0.utf16.count <= 16_384 })
    }

    @Test func backOffGrowsAndIsCapped() {
        for _ in 0..<50 {
            let first = Repo.backOff(attempt: 0)
            #expect(first >= .milliseconds(500) && first <= .seconds(1))
            let capped = Repo.backOff(attempt: 100)
            #expect(capped >= .seconds(15) && capped <= .seconds(30))
        }
        #expect(Repo.backOff(attempt: 3) <= .milliseconds(2197))
    }

    @Test func largeValuesGoThroughSplitFrames() async throws {
        try await DatabaseTests.withServer { _, url in
            let database = try Database(url: url)
            defer { database.shutdown() }
            let text = String(repeating: "x", count: 100_000)
            let ref = database.reference("big")
            try await ref.setValue(.string(text))
            #expect(try await ref.getData().jsonValue == .string(text))
        }
    }

    @Test func reconnectsToARestartedServerAndListensAgain() async throws {
        var logger = Logger(label: "kindling-client-test")
        logger.logLevel = .critical
        let first = try await KindlingServer.start(ServerConfiguration(port: 0, logger: logger))
        let port = first.port
        let url = "http://127.0.0.1:\(port)?ns=restart"
        let database = try Database(url: url)
        defer { database.shutdown() }
        let connected = Recorder()
        database.reference(".info/connected").observeEvents(.value, on: connected.queue) { connected.record($0) }
        let values = Recorder()
        database.reference("room").observeEvents(.value, on: values.queue) { values.record($0) }
        try await values.waitForValue("null")
        _ = try await connected.wait { $0.last?.snapshot.exportText == "true" }
        let before = connected.all.count
        try await first.shutdown()
        _ = try await connected.wait { $0.dropFirst(before).map(\.snapshot.exportText) == ["false"] }
        // Written while the server is down: kept, and sent after the reconnect.
        database.reference().child("room").setValue("while down", withCompletionBlock: nil)
        let second = try await KindlingServer.start(ServerConfiguration(port: port, logger: logger))
        defer { Task { try await second.shutdown() } }
        _ = try await connected.wait { $0.last?.snapshot.exportText == "true" }
        let other = try Database(url: url)
        defer { other.shutdown() }
        #expect(try await eventually { try await other.reference("room").getData().jsonValue == .string("while down") })
        try await other.reference("room").setValue(.string("after restart"))
        try await values.waitForValue(#""after restart""#)
    }

    @Test func onDisconnectRunsWhenTheConnectionDiesAndTheClientComesBack() async throws {
        try await DatabaseTests.withServer { _, url in
            let watcher = try Database(url: url)
            let victim = try Database(url: url)
            defer {
                watcher.shutdown()
                victim.shutdown()
            }
            let connected = Recorder()
            victim.reference(".info/connected").observeEvents(.value, on: connected.queue) { connected.record($0) }
            try await connected.waitForValue("true")
            try await victim.reference("presence/v").onDisconnect.setValue(.string("gone"))
            let seen = Recorder()
            watcher.reference("presence/v").observeEvents(.value, on: seen.queue) { seen.record($0) }
            try await seen.waitForValue("null")
            let before = connected.all.count
            victim.repo.abortConnection()
            try await seen.waitForValue(#""gone""#)
            _ = try await connected.wait { $0.dropFirst(before).map(\.snapshot.exportText) == ["false", "true"] }
            try await victim.reference("presence/v").setValue(.string("back"))
            try await seen.waitForValue(#""back""#)
        }
    }

    @Test func filteredQueriesMoveChildrenAndSurviveAReconnect() async throws {
        try await DatabaseTests.withServer { _, url in
            let reader = try Database(url: url)
            let writer = try Database(url: url)
            defer {
                reader.shutdown()
                writer.shutdown()
            }
            try await writer.reference("race").setValue(
                try JSONParser.parse(#"{"a":{"lap":1},"b":{"lap":2},"c":{"lap":3}}"#))
            let top = reader.reference("race").queryOrdered(byChild: "lap").queryLimited(toLast: 2)
            let moves = Recorder()
            top.observeEvents(.childMoved, on: moves.queue) { moves.record($0) }
            let values = Recorder()
            top.observeEvents(.value, on: values.queue) { values.record($0) }
            try await values.waitForValue(#"{"b":{"lap":2},"c":{"lap":3}}"#)
            try await writer.reference("race/b/lap").setValue(.number(4))
            let moved = try await moves.wait { !$0.isEmpty }
            #expect(moved.first?.snapshot.key == "b")
            #expect(moved.first?.previousSiblingKey == "c")

            reader.repo.abortConnection()
            try await writer.reference("race/a/lap").setValue(.number(9))
            try await values.waitForValue(#"{"a":{"lap":9},"b":{"lap":4}}"#)
        }
    }
}
