import Foundation
import KindlingCore
import KindlingTesting
import Testing

/// onDisconnect writes acknowledged to clients of a server process that is killed (SIGKILL) are
/// made when it starts again: every one of those connections ended with it. Each is made once:
/// not again at a later start, and not at all when it was cancelled or already made.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct OnDisconnectCrashTests {
    private static func path(_ text: String) -> JSONMember { JSONMember("p", .string(text)) }
    private static let increment = JSONValue.object([JSONMember(".sv", .object([JSONMember("increment", .number(1))]))])

    /// The whole tree of namespace `app`.
    private func tree(_ port: Int) async throws -> JSONValue {
        let reader = try await TestClient.connect(port: port, namespace: "app")
        defer { Task { await reader.abort() } }
        return try await reader.request("g", .object([Self.path("/"), JSONMember("q", .object([]))])).last?["d"]?["b"]?["d"] ?? .null
    }

    @Test func theRegistrationsOfAKilledServersConnectionsAreMadeOnceAtTheNextStart() async throws {
        guard FileManager.default.isExecutableFile(atPath: ServerProcess.binary) else {
            Issue.record("the kindling binary is not built at \(ServerProcess.binary)")
            return
        }
        let directory = NSTemporaryDirectory() + "kindling-ondisconnect-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await ServerProcess.start(dataDirectory: directory)
        // Alice: presence, registered before the namespace's first write (so before it has a
        // directory), counted so a second run would show.
        let alice = try await TestClient.connect(port: server.port, namespace: "app")
        let offline = JSONValue.object([JSONMember("alice", .string("offline")), JSONMember("runs", Self.increment)])
        _ = try await alice.request("om", .object([Self.path("/presence"), JSONMember("d", offline)]))
        _ = try await alice.request("p", .object([Self.path("/presence/alice"), JSONMember("d", .string("online"))]))
        // Bob: registers, then cancels.
        let bob = try await TestClient.connect(port: server.port, namespace: "app")
        _ = try await bob.request("o", .object([Self.path("/cancelled"), JSONMember("d", Self.increment)]))
        _ = try await bob.request("oc", .object([Self.path("/cancelled")]))
        // Carol: registers, then leaves while the server runs: made now, and never again.
        let carol = try await TestClient.connect(port: server.port, namespace: "app")
        _ = try await carol.request("o", .object([Self.path("/left"), JSONMember("d", Self.increment)]))
        await carol.close()
        try await eventually(within: .seconds(10)) { try await tree(server.port)["left"]?.numberValue == 1 }
        // Dave: registers a set, and changes it.
        let dave = try await TestClient.connect(port: server.port, namespace: "app")
        _ = try await dave.request("o", .object([Self.path("/dave"), JSONMember("d", .string("first"))]))
        _ = try await dave.request("o", .object([Self.path("/dave"), JSONMember("d", .string("gone"))]))
        #expect(try await tree(server.port)["presence"]?["alice"]?.stringValue == "online")
        await server.kill()
        for start in 1...2 {
            let again = try await ServerProcess.start(dataDirectory: directory)
            let data = try await tree(again.port)
            #expect(data["presence"]?["alice"]?.stringValue == "offline", "start \(start)")
            #expect(data["presence"]?["runs"]?.numberValue == 1, "start \(start)")
            #expect(data["cancelled"] == nil, "start \(start)")
            #expect(data["left"]?.numberValue == 1, "start \(start)")
            #expect(data["dave"]?.stringValue == "gone", "start \(start)")
            await again.kill()
        }
        for client in [alice, bob, dave] { await client.abort() }
    }
}
