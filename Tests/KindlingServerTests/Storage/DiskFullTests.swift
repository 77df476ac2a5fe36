import Foundation
import KindlingCore
import KindlingTesting
import Synchronization
import Testing

@testable import KindlingServer

/// A disk that stops taking writes, made real: the server process gets a file-size limit below
/// the size of its log (so its next append fails as on a full disk), then the limit is lifted.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct DiskFullTests {
    static func put(_ path: String, _ value: Int) -> JSONValue {
        .object([JSONMember("p", .string(path)), JSONMember("d", .number(Double(value)))])
    }

    static func status(_ reply: [JSONValue]) -> String? { reply.last?["d"]?["b"]?["s"]?.stringValue }

    @Test func writesAreRefusedWhileTheDiskFailsAndNothingUnloggedIsAcknowledged() async throws {
        let directory = NSTemporaryDirectory() + "kindling-full-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var server = try await ServerProcess.start(dataDirectory: directory)
        let writer = try await TestClient.connect(port: server.port, namespace: "full")
        #expect(Self.status(try await writer.request("p", Self.put("/before", 1))) == "ok")

        try await server.limitFileSize(to: 1)
        // This write is applied in memory but its log record cannot be written: it must wait.
        let acknowledged = Atomic<Bool>(false)
        let waiting = Task {
            let reply = try await writer.request("p", Self.put("/during", 2), timeout: .seconds(60))
            acknowledged.store(true, ordering: .sequentiallyConsistent)
            return Self.status(reply)
        }
        // The failure is logged loudly; from then on new writes are refused outright.
        #expect(try await server.waitForLog(containing: "writes to the log are failing"))
        let other = try await TestClient.connect(port: server.port, namespace: "full")
        let refusal = try await other.request("p", Self.put("/refused", 3))
        #expect(Self.status(refusal) == "unavailable")
        #expect(refusal.last?["d"]?["b"]?["d"]?.stringValue?.contains("disk") == true)
        // Negative check: a window in which the held write must NOT be acknowledged.
        try await Task.sleep(for: .milliseconds(1500))
        let acknowledgedEarly = acknowledged.load(ordering: .sequentiallyConsistent)
        #expect(!acknowledgedEarly, "a write was acknowledged before it was durable")

        // Space returns: the held write is logged and acknowledged, and writes are taken again.
        try await server.limitFileSize(to: nil)
        #expect(try await waiting.value == "ok")
        #expect(Self.status(try await other.request("p", Self.put("/after", 4))) == "ok")
        await writer.abort()
        await other.abort()

        // Everything acknowledged is on disk; the refused write never happened.
        await server.kill()
        server = try await ServerProcess.start(dataDirectory: directory)
        let reader = try await TestClient.connect(port: server.port, namespace: "full")
        let data =
            try await reader.request("g", .object([JSONMember("p", .string("/")), JSONMember("q", .object([]))])).last?["d"]?["b"]?["d"] ?? .null
        #expect(data["before"]?.numberValue == 1)
        #expect(data["during"]?.numberValue == 2)
        #expect(data["after"]?.numberValue == 4)
        #expect(data["refused"] == nil)
        await reader.abort()
        await server.kill()
    }

    /// A REST GET never shows a write that is not yet durable: while a write waits for the log,
    /// a GET of its location waits behind it, and answers once the write is on disk.
    @Test func restReadsSeeOnlyDurableWrites() async throws {
        let directory = NSTemporaryDirectory() + "kindling-durable-read-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await ServerProcess.start(dataDirectory: directory)
        let port = server.port
        let before = try await TestHTTPConnection.request(port: port, "PUT", "/v.json?ns=held", body: "1")
        #expect(before.status == 200)
        try await server.limitFileSize(to: 1)
        let writer = Task { try await TestHTTPConnection.request(port: port, "PUT", "/v.json?ns=held", body: "2", timeout: .seconds(60)) }
        #expect(try await server.waitForLog(containing: "writes to the log are failing"))
        let answered = Atomic<Bool>(false)
        let reader = Task {
            let response = try await TestHTTPConnection.request(port: port, "GET", "/v.json?ns=held", timeout: .seconds(60))
            answered.store(true, ordering: .sequentiallyConsistent)
            return response
        }
        // Negative check: a window in which the read must NOT be answered.
        try await Task.sleep(for: .milliseconds(1500))
        let answeredEarly = answered.load(ordering: .sequentiallyConsistent)
        #expect(!answeredEarly, "a read answered with a write that was not durable")
        try await server.limitFileSize(to: nil)
        #expect(try await writer.value.status == 200)
        let read = try await reader.value
        #expect(read.status == 200 && read.text == "2")
    }
}
