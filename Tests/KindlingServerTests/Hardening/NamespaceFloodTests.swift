import Foundation
import KindlingCore
import KindlingTesting
import Logging
import Testing

@testable import KindlingServer

/// No flood of namespace names can exhaust the server: names are validated, reads create
/// nothing, new namespaces are capped, and log files are open only while written.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct NamespaceFloodTests {
    static func temporaryDirectory() -> String { NSTemporaryDirectory() + "kindling-flood-\(UUID().uuidString)" }

    static func withServer(
        directory: String?, maxNamespaces: Int = 10_000, logIdleTimeout: Duration = .seconds(60),
        _ body: (KindlingServer) async throws -> Void
    ) async throws {
        try await KindlingTesting.withServer(
            { configuration in
                configuration.storage = directory.map { StorageConfiguration(directory: $0, logIdleTimeout: logIdleTimeout) }
                configuration.eventStreamKeepAlive = .milliseconds(200)
                configuration.maxNamespaces = maxNamespaces
            }, body)
    }

    /// The namespace directories in a data directory.
    static func folders(_ directory: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { name in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: directory + "/" + name, isDirectory: &isDirectory) && isDirectory.boolValue
        }.sorted()
    }

    /// This process's open files under `directory`.
    static func openFiles(under directory: String) -> Int {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.filter { descriptor in
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + descriptor)) ?? ""
            return target.hasPrefix(directory) && target.hasSuffix(".klog")
        }.count
    }

    static func status(_ reply: [JSONValue]) -> String? { reply.last?["d"]?["b"]?["s"]?.stringValue }

    @Test func badNamesAreAClean400AndNoUpgrade() async throws {
        try await Self.withServer(directory: nil) { server in
            let http = try await TestHTTPConnection.connect(port: server.port)
            defer { http.close() }
            let long = String(repeating: "a", count: 64)
            for name in ["%0Aforged%20line", long, "Upper", "a_b", "-a", "a.b", "%2E%2E", "%C3%A9"] {
                let response = try await http.request("PUT", "/x.json?ns=\(name)", body: "1")
                #expect(response.status == 400, "\(name)")
                #expect(response.text.contains("Invalid namespace"))
                #expect(!response.text.contains("forged"))
                #expect(try await http.request("GET", "/x.json?ns=\(name)").status == 400)
            }
            #expect(try await http.request("PUT", "/x.json?ns=\(String(repeating: "a", count: 63))", body: "1").status == 200)
            #expect(try await http.request("PUT", "/x.json?ns=0-ok", body: "1").status == 200)
            // The WebSocket upgrade is refused the same way.
            let upgrade = try await http.request(
                "GET", "/.ws?v=5&ns=%0Aforged",
                headers: [
                    ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
                    ("Sec-WebSocket-Version", "13"),
                ])
            #expect(upgrade.status == 400 && upgrade.text.contains("Invalid namespace"))
            #expect(server.namespaces == ["0-ok", String(repeating: "a", count: 63)])
        }
    }

    @Test func readsOfMissingNamespacesCreateNothing() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await Self.withServer(directory: directory) { server in
            let http = try await TestHTTPConnection.connect(port: server.port)
            defer { http.close() }
            for index in 0..<200 {
                let response = try await http.request("GET", "/a/b.json?ns=ghost\(index)")
                #expect(response.status == 200 && response.text == "null")
            }
            let stream = try await TestHTTPConnection.connect(port: server.port)
            try await stream.send("GET", "/s.json?ns=ghost-sse", headers: [("Accept", "text/event-stream")])
            #expect(try await stream.responseHead().status == 200)
            #expect(try await stream.nextEvent().data == #"{"path":"/","data":null}"#)
            let listener = try await TestClient.connect(port: server.port, namespace: "ghost-ws")
            let get = try await listener.request("g", .object([JSONMember("p", .string("/w")), JSONMember("q", .object([]))]))
            #expect(get.last?["d"]?["b"]?["d"] == .null)
            #expect(Self.status(try await listener.request("q", .object([JSONMember("p", .string("/w")), JSONMember("h", .string(""))]))) == "ok")
            #expect(Self.folders(directory).isEmpty, "a read created a namespace")
            #expect(Self.openFiles(under: directory) == 0)

            // A write to a namespace someone listens to reaches them, and only then is stored.
            #expect(try await http.request("PUT", "/w.json?ns=ghost-ws", body: "7").status == 200)
            var message = try await listener.nextMessage()
            while message["d"]?["a"]?.stringValue != "d" { message = try await listener.nextMessage() }
            #expect(message["d"]?["b"]?["d"] == .number(7))
            await listener.close()
            stream.close()
            #expect(await stream.waitForClose())
            // Refused writes create nothing either.
            #expect(try await http.request("PUT", "/w.json?ns=ghost-bad", body: "{nope").status == 400)
            #expect(try await http.request("PUT", "/.priority/x.json?ns=ghost-bad", body: "1").status == 400)
            // The transient namespaces are forgotten once their users left.
            try await eventually(within: .seconds(5)) { server.namespaces == ["ghost-ws"] }
            #expect(server.namespaces == ["ghost-ws"])
            #expect(Self.folders(directory) == ["ghost-ws"])
        }
    }

    @Test func newNamespacesOverTheCapAreRefused() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await Self.withServer(directory: directory, maxNamespaces: 2) { server in
            let http = try await TestHTTPConnection.connect(port: server.port)
            defer { http.close() }
            #expect(try await http.request("PUT", "/x.json?ns=one", body: "1").status == 200)
            #expect(try await http.request("PUT", "/x.json?ns=two", body: "2").status == 200)
            let refused = try await http.request("PUT", "/x.json?ns=three", body: "3")
            #expect(refused.status == 507)
            #expect(refused.text.contains("maximum of 2 namespaces"))
            // Reads of it are still answered, and a realtime write is refused alike.
            #expect(try await http.request("GET", "/x.json?ns=three").text == "null")
            let client = try await TestClient.connect(port: server.port, namespace: "three")
            let reply = try await client.request("p", .object([JSONMember("p", .string("/x")), JSONMember("d", .number(3))]))
            #expect(Self.status(reply) == "unavailable")
            #expect(reply.last?["d"]?["b"]?["d"]?.stringValue?.contains("maximum of 2 namespaces") == true)
            // An onDisconnect write would create it too: refused when registered.
            let onDisconnect = try await client.request("o", .object([JSONMember("p", .string("/gone")), JSONMember("d", .number(1))]))
            #expect(Self.status(onDisconnect) == "unavailable")
            await client.close()
            // Existing namespaces keep taking writes.
            #expect(try await http.request("PUT", "/y.json?ns=one", body: "1").status == 200)
            #expect(Self.folders(directory) == ["one", "two"])
        }
    }

    /// First writes to many new names at once, each decided on its own namespace's queue, take
    /// exactly the cap's places: none slips past it while the others are being decided.
    @Test func concurrentFirstWritesDoNotOvershootTheCap() async throws {
        try await Self.withServer(directory: nil, maxNamespaces: 5) { server in
            let port = server.port
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<40 {
                    group.addTask { try await TestHTTPConnection.request(port: port, "PUT", "/v.json?ns=burst\(index)", body: "1").status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 5, "\(statuses)")
            #expect(statuses.filter { $0 == 507 }.count == 35, "\(statuses)")
            #expect(server.namespaces.count == 5)
        }
    }

    /// A first write that is refused (here: invalid data) gives its place under the cap back.
    @Test func aRefusedFirstWriteGivesItsPlaceBack() async throws {
        try await Self.withServer(directory: nil, maxNamespaces: 1) { server in
            let bad = try await TestHTTPConnection.request(port: server.port, "PUT", "/v.json?ns=first", body: #"{"a.b":1}"#)
            #expect(bad.status == 400)
            let good = try await TestHTTPConnection.request(port: server.port, "PUT", "/v.json?ns=second", body: "1")
            #expect(good.status == 200)
            let third = try await TestHTTPConnection.request(port: server.port, "PUT", "/v.json?ns=third", body: "1")
            #expect(third.status == 507)
        }
    }

    @Test func logFilesAreClosedWhenIdle() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await Self.withServer(directory: directory, logIdleTimeout: .milliseconds(200)) { server in
            let http = try await TestHTTPConnection.connect(port: server.port)
            defer { http.close() }
            for index in 0..<20 {
                #expect(try await http.request("PUT", "/x.json?ns=n\(index)", body: "\(index)").status == 200)
            }
            try await eventually(within: .seconds(5), every: .milliseconds(50)) { Self.openFiles(under: directory) == 0 }
            #expect(Self.openFiles(under: directory) == 0, "idle logs stay open")
            // The next write opens the log again, and appends to it.
            #expect(try await http.request("PUT", "/y.json?ns=n3", body: "4").status == 200)
            #expect(try await http.request("GET", "/.json?ns=n3").text == #"{"x":3,"y":4}"#)
        }
        let server = try await ServerProcess.start(dataDirectory: directory)
        #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/.json?ns=n3").text == #"{"x":3,"y":4}"#)
        await server.kill()
    }

    @Test func startsWithMoreNamespacesThanOpenFilesAllowed() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await Self.withServer(directory: directory) { server in
            let http = try await TestHTTPConnection.connect(port: server.port)
            defer { http.close() }
            for index in 0..<300 {
                #expect(try await http.request("PUT", "/v.json?ns=db\(index)", body: "\(index)").status == 200)
            }
        }
        #expect(Self.folders(directory).count == 300)
        let server = try await ServerProcess.start(dataDirectory: directory, descriptorLimit: 100)
        #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/v.json?ns=db299").text == "299")
        // Writes to many of them go through: each log is opened for its write.
        for index in stride(from: 0, to: 300, by: 3) {
            #expect(try await TestHTTPConnection.request(port: server.port, "PUT", "/w.json?ns=db\(index)", body: "1").status == 200)
        }
        await server.kill()
    }
}
