import Foundation
import KindlingCore
import KindlingTesting
import Testing

@testable import KindlingServer

/// The real `kindling serve` process: readiness while its disk refuses writes, and a SIGTERM
/// that drains (onDisconnect writes run and are on disk) and exits 0 in time.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ProcessLifecycleTests {
    static func readiness(_ port: Int) async throws -> (status: Int, body: String) {
        let response = try await TestHTTPConnection.request(port: port, "GET", "/.ready")
        return (response.status, response.text)
    }

    @Test func readinessIsRefusedWhileTheDiskRefusesWrites() async throws {
        let directory = NSTemporaryDirectory() + "kindling-ready-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await ServerProcess.start(dataDirectory: directory)
        #expect(try await Self.readiness(server.port).status == 200)
        let writer = try await TestClient.connect(port: server.port, namespace: "full")
        #expect(DiskFullTests.status(try await writer.request("p", DiskFullTests.put("/before", 1))) == "ok")

        // The technique of DiskFullTests: a file-size limit below the log's size fails its next append.
        try await server.limitFileSize(to: 1)
        let waiting = Task { DiskFullTests.status(try await writer.request("p", DiskFullTests.put("/during", 2), timeout: .seconds(60))) }
        #expect(try await server.waitForLog(containing: "writes to the log are failing"))
        let refused = try await Self.readiness(server.port)
        #expect(refused.status == 503)
        #expect(refused.body.contains("disk"))
        // Still alive meanwhile.
        #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/.health").status == 200)

        try await server.limitFileSize(to: nil)
        #expect(try await waiting.value == "ok")
        var status = 0
        try await eventually(within: .seconds(10), every: .milliseconds(100)) {
            status = try await Self.readiness(server.port).status
            return status == 200
        }
        #expect(status == 200)
        await writer.abort()
        await server.kill()
    }

    @Test func sigtermDrainsRunsOnDisconnectWritesAndExitsZero() async throws {
        let directory = NSTemporaryDirectory() + "kindling-drain-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var server = try await ServerProcess.start(dataDirectory: directory, arguments: ["--drain-seconds", "5"])
        let client = try await TestClient.connect(port: server.port, namespace: "drain")
        let presence = JSONValue.object([JSONMember("p", .string("/presence/me")), JSONMember("d", .string("offline"))])
        #expect(DiskFullTests.status(try await client.request("o", presence)) == "ok")
        #expect(
            DiskFullTests.status(
                try await client.request("p", .object([JSONMember("p", .string("/presence/me")), JSONMember("d", .string("online"))]))) == "ok")

        let signalled = ContinuousClock.now
        server.child.signal(SIGTERM)  // SIGTERM
        try await eventually(within: .seconds(7) - (ContinuousClock.now - signalled)) { !server.child.isRunning }
        #expect(!server.child.isRunning, "still running after the drain time")
        #expect(server.child.ending == .exited(0))
        #expect(await client.waitForClose())

        server = try await ServerProcess.start(dataDirectory: directory)
        let reader = try await TestClient.connect(port: server.port, namespace: "drain")
        let read = try await reader.request("g", .object([JSONMember("p", .string("/presence/me")), JSONMember("q", .object([]))]))
        #expect(read.last?["d"]?["b"]?["d"]?.stringValue == "offline")
        await reader.abort()
        await server.kill()
    }

    /// A disk refusing writes does not hold the shutdown: the write it holds was never
    /// acknowledged, and the process still exits 0 within the drain time.
    @Test func sigtermExitsZeroWhileTheDiskRefusesWrites() async throws {
        let directory = NSTemporaryDirectory() + "kindling-drain-full-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await ServerProcess.start(dataDirectory: directory, arguments: ["--drain-seconds", "2"])
        let writer = try await TestClient.connect(port: server.port, namespace: "full")
        #expect(DiskFullTests.status(try await writer.request("p", DiskFullTests.put("/before", 1))) == "ok")
        try await server.limitFileSize(to: 1)
        let number = try await writer.sendRequest("p", DiskFullTests.put("/during", 2))
        #expect(try await server.waitForLog(containing: "writes to the log are failing"))

        let signalled = ContinuousClock.now
        server.child.signal(SIGTERM)
        try await eventually(within: .seconds(4) - (ContinuousClock.now - signalled)) { !server.child.isRunning }
        #expect(!server.child.isRunning, "still running past the drain time")
        #expect(server.child.ending == .exited(0))
        // The held write was never acknowledged.
        #expect(!writer.receivedFrames().contains { $0.contains("\"r\":\(number)") && $0.contains("\"ok\"") })
        await writer.abort()
    }
}
