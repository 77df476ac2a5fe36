import KindlingCore
import KindlingServer
import KindlingTesting
import Logging
import Testing

/// What one realtime connection may hold: listens, and onDisconnect operations and their bytes.
/// Over a cap a request is refused with `too_big` and changes nothing; the connection goes on.
@Suite(.timeLimit(.minutes(2)))
struct ConnectionCapTests {
    static func configuration() -> ServerConfiguration {
        var logger = Logger(label: "kindling-test")
        logger.logLevel = .critical
        var configuration = ServerConfiguration(port: 0, logger: logger)
        configuration.connectionLimits = ConnectionLimits(maxListens: 5, maxOnDisconnectOperations: 3, maxOnDisconnectBytes: 1000)
        return configuration
    }

    static func status(_ reply: [JSONValue]) -> String? { reply.last?["d"]?["b"]?["s"]?.stringValue }
    static func body(_ members: (String, JSONValue)...) -> JSONValue { .object(members.map { JSONMember($0.0, $0.1) }) }

    @Test func listensOverTheCapAreRefused() async throws {
        try await KindlingServer.run(Self.configuration()) { server in
            let client = try await TestClient.connect(port: server.port, namespace: "caps")
            defer { Task { await client.close() } }
            for index in 0..<5 {
                #expect(Self.status(try await client.request("q", Self.body(("p", .string("/l\(index)")), ("h", .string(""))))) == "ok")
            }
            // Listening again to the same location is no new listen.
            #expect(Self.status(try await client.request("q", Self.body(("p", .string("/l0")), ("h", .string(""))))) == "ok")
            let over = try await client.request("q", Self.body(("p", .string("/l5")), ("h", .string(""))))
            #expect(Self.status(over) == "too_big")
            #expect(over.count == 1, "no data goes out for a refused listen")
            // Dropping one makes room for another.
            _ = try await client.request("n", Self.body(("p", .string("/l1"))))
            #expect(Self.status(try await client.request("q", Self.body(("p", .string("/l5")), ("h", .string(""))))) == "ok")
        }
    }

    @Test func onDisconnectOperationsAndBytesOverTheCapAreRefused() async throws {
        try await KindlingServer.run(Self.configuration()) { server in
            let client = try await TestClient.connect(port: server.port, namespace: "caps")
            let big = JSONValue.string(String(repeating: "x", count: 2000))
            #expect(Self.status(try await client.request("o", Self.body(("p", .string("/big")), ("d", big)))) == "too_big")
            for index in 0..<3 {
                #expect(Self.status(try await client.request("o", Self.body(("p", .string("/gone/\(index)")), ("d", .bool(true))))) == "ok")
            }
            #expect(
                Self.status(try await client.request("om", Self.body(("p", .string("/gone")), ("d", Self.body(("x", .bool(true))))))) == "too_big")
            // Cancelling frees the room again.
            _ = try await client.request("oc", Self.body(("p", .string("/gone/2"))))
            #expect(Self.status(try await client.request("o", Self.body(("p", .string("/gone/3")), ("d", .bool(true))))) == "ok")
            await client.abort()
            let reader = try await TestClient.connect(port: server.port, namespace: "caps")
            defer { Task { await reader.close() } }
            var data: JSONValue = .null
            try await eventually(within: .seconds(10), every: .milliseconds(50)) {
                data = try await reader.request("g", Self.body(("p", .string("/")), ("q", .object([])))).last?["d"]?["b"]?["d"] ?? .null
                return data != .null
            }
            #expect(data["gone"] == Self.body(("0", .bool(true)), ("1", .bool(true)), ("3", .bool(true))))
            #expect(data["big"] == nil)
        }
    }

    /// Presence code arms the same onDisconnect write at every change of status: a write that
    /// overwrites queued ones takes their place instead of adding to the count, and the last
    /// one armed is what runs.
    @Test func anOnDisconnectWriteReplacesTheQueuedOnesItOverwrites() async throws {
        try await KindlingServer.run(Self.configuration()) { server in
            let client = try await TestClient.connect(port: server.port, namespace: "rearm")
            for index in 0..<10 {
                let status = Self.body(("state", .string("offline")), ("armed", .number(Double(index))))
                #expect(Self.status(try await client.request("o", Self.body(("p", .string("/status/alice")), ("d", status)))) == "ok")
                #expect(
                    Self.status(
                        try await client.request("om", Self.body(("p", .string("/seen")), ("d", Self.body(("alice", .number(Double(index))))))))
                        == "ok")
            }
            // A put above a queued write replaces it too, so the third place is still the last.
            #expect(Self.status(try await client.request("o", Self.body(("p", .string("/rooms/r/0")), ("d", .bool(true))))) == "ok")
            #expect(
                Self.status(try await client.request("o", Self.body(("p", .string("/rooms")), ("d", Self.body(("closed", .bool(true))))))) == "ok")
            #expect(Self.status(try await client.request("o", Self.body(("p", .string("/another")), ("d", .bool(true))))) == "too_big")
            // Over the byte cap it is refused, and what was queued stays.
            let big = JSONValue.string(String(repeating: "x", count: 2000))
            #expect(Self.status(try await client.request("o", Self.body(("p", .string("/status/alice")), ("d", big)))) == "too_big")
            await client.abort()
            let reader = try await TestClient.connect(port: server.port, namespace: "rearm")
            defer { Task { await reader.close() } }
            var data: JSONValue = .null
            try await eventually(within: .seconds(10), every: .milliseconds(50)) {
                data = try await reader.request("g", Self.body(("p", .string("/")), ("q", .object([])))).last?["d"]?["b"]?["d"] ?? .null
                return data["rooms"] != nil
            }
            #expect(data["status"]?["alice"] == Self.body(("armed", .number(9)), ("state", .string("offline"))))
            #expect(data["seen"] == Self.body(("alice", .number(9))))
            #expect(data["rooms"] == Self.body(("closed", .bool(true))))
        }
    }
}
