import Foundation
import KindlingTesting
import Testing

@testable import KindlingServer

/// The descriptor limit is not a cliff: connections are capped below it, the longest-idle HTTP
/// connection makes room for a new client, and a server started with a low `ulimit -n` keeps
/// serving new clients while idle ones pile up.
@Suite(.timeLimit(.minutes(2)))
struct ConnectionLimitTests {
    @Test func theLongestIdleConnectionMakesRoomForANewClient() async throws {
        try await HardeningServer.with({ $0.maxConnections = 10 }) { server, logs in
            var idle: [RawConnection] = []
            for _ in 0..<10 {
                idle.append(try await RawConnection.connect(port: server.port))
                // Deliberate spacing: each connection becomes idle at a distinct moment.
                try await Task.sleep(for: .milliseconds(5))
            }
            defer { idle.forEach { $0.close() } }
            let response = try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t")
            #expect(response.status == 200)
            // One idle connection (the first to have become idle) was closed for it.
            try await eventually(within: .seconds(5), every: .milliseconds(10)) { idle.contains(where: \.isClosed) }
            #expect(idle.filter(\.isClosed).count == 1)
            #expect(logs.contains("closed the longest-idle"))
        }
    }

    /// Over the limit with none idle, a new connection's request (REST or a WebSocket upgrade) is
    /// answered 503 with `Retry-After` (a liveness probe, 200). As many connections as are being
    /// answered so (one, at this limit) are held; past that a new one is closed at once, and one
    /// that sends nothing is closed after a while.
    @Test func connectionsOverTheLimitAreAnswered503WhenNoneIsIdle() async throws {
        try await HardeningServer.with({ $0.maxConnections = 3 }) { server, logs in
            var clients: [TestClient] = []
            for _ in 0..<3 { clients.append(try await TestClient.connect(port: server.port)) }
            // One connection at a time is answered so at this limit: a request that comes while
            // the last one is still being let go finds its connection closed, and is tried again.
            func overLimit(_ method: String, _ uri: String, headers: [(String, String)] = [], body: String? = nil) async throws -> TestHTTPResponse {
                var response: TestHTTPResponse?
                try await eventually(within: .seconds(5), every: .milliseconds(100)) {
                    response = try? await TestHTTPConnection.request(
                        port: server.port, method, uri, headers: headers, body: body, timeout: .seconds(5))
                    return response != nil
                }
                guard let response else { throw TestClientError.timedOut }
                return response
            }
            let refused = try await overLimit("GET", "/a.json?ns=t")
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == "1")
            #expect(refused.text.contains("limit of 3 connections"))
            let upgrade = try await overLimit(
                "GET", "/.ws?ns=t&v=5",
                headers: [
                    ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
                    ("Sec-WebSocket-Version", "13"),
                ])
            #expect(upgrade.status == 503)
            // A write's body is read and dropped after the answer, so the 503 is not lost to a
            // reset; a liveness probe is told the process serves.
            let write = try await overLimit("PUT", "/a.json?ns=t", body: "\"" + String(repeating: "x", count: 100_000) + "\"")
            #expect(write.status == 503)
            let health = try await overLimit("GET", "/.health")
            #expect(health.status == 200)
            // Once the server has let the probe's connection go (when it sees it closed): then
            // `silent` takes its place among the connections being answered.
            #expect(try await eventually { server.overLimit.count == 0 })
            let silent = try await RawConnection.connect(port: server.port)
            defer { silent.close() }
            // No wait: the server takes connections in the order they were made, so `silent` is
            // held before `extra` is even accepted.
            let extra = try await RawConnection.connect(port: server.port)
            defer { extra.close() }
            // Four seconds for "at once" on a loaded machine: still less than the five after
            // which a connection being answered 503 that sends nothing is closed.
            #expect(await extra.waitForClose(timeout: .seconds(4)), "past the connections being answered 503, closed at once")
            #expect(await silent.waitForClose(timeout: .seconds(10)), "a connection over the limit that sends nothing is closed")
            #expect(logs.contains("refusing connections"))
            await clients[0].close()
            // Room again once the server has let the closed connection go (it logs that).
            #expect(await logs.waitFor("debug disconnected", timeout: .seconds(5)))
            let again = try await TestClient.connect(port: server.port)
            await again.close()
            for client in clients.dropFirst() { await client.close() }
        }
    }

    @Test func aServerAtALowDescriptorLimitKeepsServingNewClients() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kindling-fd-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await ServerProcess.start(dataDirectory: directory, arguments: ["--log-level", "notice"], descriptorLimit: 128)
        var idle: [RawConnection] = []
        defer { idle.forEach { $0.close() } }
        for _ in 0..<200 {
            guard let connection = try? await RawConnection.connect(port: server.port) else { break }
            idle.append(connection)
        }
        // Every one connected (the kernel completes the handshakes): they pile up at the server.
        #expect(idle.count == 200)
        for attempt in 0..<5 {
            let response = try await TestHTTPConnection.request(port: server.port, "PUT", "/n.json?ns=t", body: "\(attempt)")
            #expect(response.status == 200)
        }
        #expect(try await server.waitForLog(containing: "closed the longest-idle"))
    }

    @Test func theSoftDescriptorLimitIsRaisedToTheHardOneAtStart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kindling-fd-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await ServerProcess.start(
            dataDirectory: directory, arguments: ["--log-level", "notice"], descriptorLimit: 64, softLimitOnly: true)
        var open: [TestHTTPConnection] = []
        defer { open.forEach { $0.close() } }
        // 150 connections, each answered: more than 64 descriptors in use at once.
        for index in 0..<150 {
            let connection = try await TestHTTPConnection.connect(port: server.port)
            open.append(connection)
            #expect(try await connection.request("GET", "/n\(index).json?ns=t", timeout: .seconds(5)).status == 200)
        }
        #expect(open.count == 150)
    }

    @Test func outOfDescriptorsTheServerPausesAcceptingInsteadOfSpinning() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kindling-fd-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A connection limit above the descriptor limit: accept itself runs out (EMFILE).
        let server = try await ServerProcess.start(
            dataDirectory: directory, arguments: ["--log-level", "notice", "--max-connections", "100000"], descriptorLimit: 64)
        var idle: [RawConnection] = []
        defer { idle.forEach { $0.close() } }
        for _ in 0..<100 {
            guard let connection = try? await RawConnection.connect(port: server.port) else { break }
            idle.append(connection)
        }
        #expect(idle.count == 100)
        #expect(try await server.waitForLog(containing: "cannot accept connections"))
        let before = try #require(server.cpuSeconds())
        // Deliberate measuring window: the CPU used over 2 s, not a wait for an event.
        try await Task.sleep(for: .seconds(2))
        let used = try #require(server.cpuSeconds()) - before
        #expect(used < 1.0, "the server used \(used) s of CPU in 2 s while out of descriptors")
        // Once descriptors free up, new clients are served again.
        idle.forEach { $0.close() }
        idle = []
        // No wait: the connection waits in the listen backlog until the server accepts again,
        // and the request's own timeout bounds that.
        let response = try await TestHTTPConnection.request(port: server.port, "GET", "/n.json?ns=t")
        #expect(response.status == 200)
    }
}
