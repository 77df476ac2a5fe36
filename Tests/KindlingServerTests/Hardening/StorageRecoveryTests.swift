import Foundation
import KindlingCore
import KindlingTesting
import Testing

@testable import KindlingServer

/// Storage that failed and recovered is used again without a restart, and start-up cleans up
/// what a killed snapshot left.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct StorageRecoveryTests {
    static func put(_ path: String, _ value: JSONValue) -> JSONValue {
        .object([JSONMember("p", .string(path)), JSONMember("d", value)])
    }

    @Test func aSnapshotAfterALogFailureTakesWritesAgain() async throws {
        let directory = NSTemporaryDirectory() + "kindling-recovered-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var server = try await ServerProcess.start(dataDirectory: directory, arguments: ["--log-level", "info"])
        let writer = try await TestClient.connect(port: server.port, namespace: "disk")
        let filler = JSONValue.string(String(repeating: "x", count: 1000))
        for index in 0..<40 {
            #expect(DiskFullTests.status(try await writer.request("p", Self.put("/fill/f\(index)", filler))) == "ok")
        }
        let folder = StorageLayout.directory(dataDirectory: directory, namespace: "disk")
        let segment = try #require(StorageLayout.segments(in: folder).last)
        let logBytes = try #require(FileManager.default.attributesOfItem(atPath: segment.path)[.size] as? Int)
        // The log may not grow any more; a (compressed, much smaller) snapshot still fits.
        try await server.limitFileSize(to: logBytes)
        let held = Task { try await writer.request("p", Self.put("/during", .number(1)), timeout: .seconds(60)) }
        #expect(try await server.waitForLog(containing: "writes to the log are failing"))
        let other = try await TestClient.connect(port: server.port, namespace: "disk")
        #expect(DiskFullTests.status(try await other.request("p", Self.put("/refused", .number(2)))) == "unavailable")

        let requested = try await SnapshotRequestTests.requestSnapshot(directory)
        #expect(requested.status == 0, "\(requested.output)")
        #expect(try await server.waitForLog(containing: "wrote snapshot"))
        // The snapshot holds the held write: it is acknowledged, and writes are taken again with
        // the limit still in place (the new log segment is small).
        #expect(DiskFullTests.status(try await held.value) == "ok")
        #expect(DiskFullTests.status(try await other.request("p", Self.put("/after", .number(3)))) == "ok")
        #expect(try await server.waitForLog(containing: "the log is writable again"))
        await writer.abort()
        await other.abort()

        await server.kill()
        server = try await ServerProcess.start(dataDirectory: directory)
        let reader = try await TestClient.connect(port: server.port, namespace: "disk")
        let data =
            try await reader.request("g", .object([JSONMember("p", .string("/")), JSONMember("q", .object([]))])).last?["d"]?["b"]?["d"] ?? .null
        #expect(data["during"]?.numberValue == 1)
        #expect(data["after"]?.numberValue == 3)
        #expect(data["refused"] == nil)
        #expect(data["fill"]?["f39"] == filler)
        await reader.abort()
        await server.kill()
    }

    @Test func startUpRemovesFilesOfAnInterruptedSnapshot() async throws {
        let directory = NSTemporaryDirectory() + "kindling-tmp-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var server = try await ServerProcess.start(dataDirectory: directory)
        #expect(try await TestHTTPConnection.request(port: server.port, "PUT", "/a.json?ns=tmp", body: "1").status == 200)
        await server.kill()
        let folder = StorageLayout.directory(dataDirectory: directory, namespace: "tmp")
        let leftover = StorageLayout.snapshotPath(folder, sequence: 1) + ".tmp"
        #expect(FileManager.default.createFile(atPath: leftover, contents: Data(repeating: 0x1F, count: 4096)))

        server = try await ServerProcess.start(dataDirectory: directory, arguments: ["--log-level", "info"])
        #expect(try await server.waitForLog(containing: "removed an unfinished file"))
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=tmp").text == "1")
        await server.kill()
    }
}
