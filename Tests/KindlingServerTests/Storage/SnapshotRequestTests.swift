import Foundation
import KindlingCore
import KindlingTesting
import Testing

@testable import KindlingServer

/// `kindling snapshot` against a running server: the snapshot lands, the log before it goes, and
/// the data survives a restart from the new snapshot.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct SnapshotRequestTests {
    /// Runs `kindling snapshot --data-dir directory`; returns its exit status and output (standard
    /// output, then standard error).
    static func requestSnapshot(_ directory: String) async throws -> (status: Int32, output: String) {
        let tool = try await ChildProcess.run(ServerProcess.binary, arguments: ["snapshot", "--data-dir", directory])
        guard case .exited(let status) = tool.ending else { return (-1, tool.output + tool.errors) }
        return (status, tool.output + tool.errors)
    }

    @Test func aRequestedSnapshotReplacesTheLog() async throws {
        let directory = NSTemporaryDirectory() + "kindling-snap-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let idle = try await Self.requestSnapshot(directory)
        #expect(idle.status == 2)
        #expect(idle.output.contains("no Kindling server is running"))
        // An offline tool holding the directory is not signalled (SIGUSR1 would end it).
        let offline = try DataDirectoryLock(directory: directory, server: false)
        let refused = try await Self.requestSnapshot(directory)
        offline.release()
        #expect(refused.status == 1)
        #expect(refused.output.contains("offline tool"))

        var server = try await ServerProcess.start(dataDirectory: directory, arguments: ["--log-level", "info"])
        let client = try await TestClient.connect(port: server.port, namespace: "snap")
        for index in 0..<50 {
            let body = JSONValue.object([JSONMember("p", .string("/items/i\(index)")), JSONMember("d", .number(Double(index)))])
            #expect(try await client.request("p", body).last?["d"]?["b"]?["s"] == .string("ok"))
        }
        await client.abort()
        let folder = StorageLayout.directory(dataDirectory: directory, namespace: "snap")
        #expect(StorageLayout.snapshots(in: folder).isEmpty)
        // The writes are in a segment the snapshot will cover, so the check after it has something
        // to see removed.
        try #require(!StorageLayout.segments(in: folder).isEmpty)

        let requested = try await Self.requestSnapshot(directory)
        #expect(requested.status == 0, "\(requested.output)")
        #expect(try await server.waitForLog(containing: "wrote snapshot"))
        #expect(StorageLayout.snapshots(in: folder).map(\.start) == [50])
        #expect(StorageLayout.segments(in: folder).allSatisfy { $0.start > 50 })
        // Nothing new since: a second request starts nothing.
        #expect(try await Self.requestSnapshot(directory).status == 0)
        #expect(try await server.waitForLog(containing: "already covers all its writes"))

        await server.kill()
        server = try await ServerProcess.start(dataDirectory: directory)
        let reader = try await TestClient.connect(port: server.port, namespace: "snap")
        let data = try await reader.request("g", .object([JSONMember("p", .string("/items")), JSONMember("q", .object([]))])).last?["d"]?["b"]?["d"]
        guard case .object(let members)? = data else {
            Issue.record("no items after the restart")
            return
        }
        #expect(members.count == 50)
        #expect(data?["i49"]?.numberValue == 49)
        await reader.abort()
        await server.kill()
    }
}
