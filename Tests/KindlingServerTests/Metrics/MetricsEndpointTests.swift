import Foundation
import KindlingCore
import KindlingTesting
import Logging
import NIOCore
import Synchronization
import Testing

@testable import KindlingServer

/// `GET /.metrics`: the counters move by exactly the traffic sent, the text parses strictly as
/// Prometheus text, the per-namespace series stay within the top N, and only loopback or an
/// admin may read them.
@Suite(.timeLimit(.minutes(2)))
struct MetricsEndpointTests {
    static let rules = """
        {"rules": {".read": true, "open": {".write": true}, "locked": {".write": false}}}
        """

    static func scrape(_ port: Int) async throws -> PrometheusText {
        let response = try await TestHTTPConnection.request(port: port, "GET", "/.metrics")
        #expect(response.status == 200)
        #expect(response.header("content-type")?.hasPrefix("text/plain; version=0.0.4") == true)
        return try PrometheusText(response.text)
    }

    static func put(_ path: String, _ value: Int) -> JSONValue {
        .object([JSONMember("p", .string(path)), JSONMember("d", .number(Double(value)))])
    }

    /// The change of a series between two scrapes (a series absent before counts from 0).
    static func delta(_ before: PrometheusText, _ after: PrometheusText, _ name: String, _ labels: [String: String] = [:]) -> Double? {
        guard let now = after.value(name, labels) else { return nil }
        return now - (before.value(name, labels) ?? 0)
    }

    /// True once the closed connections and their listen are counted gone (the scrape's own
    /// connection is the one REST connection open).
    static func settled(_ scrape: PrometheusText) -> Bool {
        scrape.value("kindling_connections_open", ["transport": "websocket"]) == 0
            && scrape.value("kindling_connections_open", ["transport": "sse"]) == 0
            && scrape.value("kindling_listens_active") == 0
            && scrape.value("kindling_connections_open", ["transport": "rest"]) == 1
    }

    @Test func countersMoveByExactlyTheTrafficSent() async throws {
        let directory = NSTemporaryDirectory() + "kindling-metrics-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = ServerConfiguration(
            port: 0, storage: StorageConfiguration(directory: directory), rules: try RulesDocument.parse(Self.rules))
        try await KindlingServer.run(configuration) { server in
            let before = try await Self.scrape(server.port)

            let socket = try await TestClient.connect(port: server.port, namespace: "metrics")
            for index in 0..<3 {
                let reply = try await socket.request("p", Self.put("/open/ws\(index)", index))
                #expect(reply.last?["d"]?["b"]?["s"]?.stringValue == "ok")
            }
            for index in 0..<2 {
                let response = try await TestHTTPConnection.request(port: server.port, "PUT", "/open/rest\(index).json?ns=metrics", body: "\(index)")
                #expect(response.status == 200)
            }
            let denied = try await TestHTTPConnection.request(port: server.port, "PUT", "/locked.json?ns=metrics", body: "1")
            #expect(denied.status == 401)
            let stream = try await TestHTTPConnection.connect(port: server.port)
            try await stream.send("GET", "/open.json?ns=metrics", headers: [("Accept", "text/event-stream")])
            #expect(try await stream.responseHead().status == 200)
            #expect(try await stream.nextEvent().event == "put")

            let after = try await Self.scrape(server.port)
            let requests = "kindling_requests_total"
            #expect(Self.delta(before, after, requests, ["action": "set", "outcome": "ok"]) == 3)
            #expect(Self.delta(before, after, requests, ["action": "rest_write", "outcome": "ok"]) == 2)
            #expect(Self.delta(before, after, requests, ["action": "rest_write", "outcome": "permission_denied"]) == 1)
            #expect(Self.delta(before, after, requests, ["action": "stream", "outcome": "ok"]) == 1)
            let allRequests = after.all(requests).reduce(0) { $0 + $1.value } - before.all(requests).reduce(0) { $0 + $1.value }
            #expect(allRequests == 7)
            #expect(Self.delta(before, after, "kindling_writes_committed_total") == 5)
            #expect(Self.delta(before, after, "kindling_connections_opened_total", ["transport": "websocket"]) == 1)
            #expect(Self.delta(before, after, "kindling_connections_opened_total", ["transport": "sse"]) == 1)
            // Three one-request connections for the writes, and this scrape's own connection.
            #expect(Self.delta(before, after, "kindling_connections_opened_total", ["transport": "rest"]) == 4)
            #expect(after.value("kindling_connections_open", ["transport": "websocket"]) == 1)
            #expect(after.value("kindling_connections_open", ["transport": "sse"]) == 1)
            #expect(Self.delta(before, after, "kindling_listens_active") == 1)
            // The socket's three acknowledgements and the stream's first event.
            #expect(Self.delta(before, after, "kindling_fanout_deliveries_total") == 4)
            #expect((Self.delta(before, after, "kindling_fanout_bytes_total") ?? 0) > 0)
            #expect((Self.delta(before, after, "kindling_log_append_seconds_count") ?? 0) >= 1)
            #expect((Self.delta(before, after, "kindling_log_fsync_seconds_count") ?? 0) >= 1)
            #expect(after.value("kindling_namespaces") == 1)
            #expect(after.types["kindling_log_append_seconds"] == "histogram")
            #expect(after.types["kindling_requests_total"] == "counter")
            #expect(after.types["kindling_connections_open"] == "gauge")

            stream.close()
            await socket.close()
            // The server counts a connection closed when it sees the close, which a loaded
            // machine can put off: scrape until the gauges settle, then check them.
            var closed = try await Self.scrape(server.port)
            try await eventually(within: .seconds(10), every: .milliseconds(50)) {
                closed = try await Self.scrape(server.port)
                return Self.settled(closed)
            }
            #expect(closed.value("kindling_connections_open", ["transport": "websocket"]) == 0)
            #expect(closed.value("kindling_connections_open", ["transport": "sse"]) == 0)
            #expect(closed.value("kindling_listens_active") == 0)
            // This scrape's connection is the one REST connection open.
            #expect(closed.value("kindling_connections_open", ["transport": "rest"]) == 1)
        }
    }

    /// The writes a connection queued run when it closes, each counted as an onDisconnect
    /// write (a refused one too), none as a REST write.
    @Test func onDisconnectWritesAreCountedUnderTheirOwnActionWhenTheyRun() async throws {
        try await KindlingServer.run(ServerConfiguration(port: 0, rules: try RulesDocument.parse(Self.rules))) { server in
            let watcher = try await TestClient.connect(port: server.port, namespace: "metrics")
            _ = try await watcher.request("q", .object([JSONMember("p", .string("/open")), JSONMember("h", .string(""))]))
            let before = try await Self.scrape(server.port)
            let leaving = try await TestClient.connect(port: server.port, namespace: "metrics")
            for (action, path) in [("o", "/open/gone"), ("om", "/open"), ("o", "/locked/gone")] {
                let data: JSONValue = action == "om" ? .object([JSONMember("seen", .number(1))]) : .bool(true)
                let reply = try await leaving.request(action, .object([JSONMember("p", .string(path)), JSONMember("d", data)]))
                // The rules are checked when a write is queued (and again when it runs).
                #expect(reply.last?["d"]?["b"]?["s"]?.stringValue == (path.hasPrefix("/locked") ? "permission_denied" : "ok"), "\(path)")
            }
            await leaving.close()
            // The set's event, then the update's: both ran, and were counted before they were sent.
            for _ in 0..<2 { _ = try await watcher.nextMessage() }
            let after = try await Self.scrape(server.port)
            let requests = "kindling_requests_total"
            #expect(Self.delta(before, after, requests, ["action": "ondisconnect", "outcome": "ok"]) == 2)
            #expect(Self.delta(before, after, requests, ["action": "ondisconnect", "outcome": "permission_denied"]) == 1)
            #expect(Self.delta(before, after, requests, ["action": "ondisconnect_set", "outcome": "ok"]) == 1)
            #expect(Self.delta(before, after, requests, ["action": "ondisconnect_update", "outcome": "ok"]) == 1)
            #expect((Self.delta(before, after, requests, ["action": "rest_write", "outcome": "ok"]) ?? 0) == 0)
            await watcher.close()
        }
    }

    @Test func restRequestsRefusedBeforeTheirNamespaceAreCountedAsErrors() async throws {
        try await KindlingServer.run(ServerConfiguration(port: 0)) { server in
            let before = try await Self.scrape(server.port)
            let badKey = try await TestHTTPConnection.request(port: server.port, "PUT", "/a$b.json?ns=metrics", body: "1")
            #expect(badKey.status == 400)
            let badRead = try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=metrics&orderBy=nonsense")
            #expect(badRead.status == 400)
            let after = try await Self.scrape(server.port)
            #expect(Self.delta(before, after, "kindling_requests_total", ["action": "rest_write", "outcome": "error"]) == 1)
            #expect(Self.delta(before, after, "kindling_requests_total", ["action": "rest_read", "outcome": "error"]) == 1)
        }
    }

    @Test func rulesRequestsAreCountedWithTheirOutcome() async throws {
        try await KindlingServer.run(ServerConfiguration(port: 0)) { server in
            let before = try await Self.scrape(server.port)
            let rules = #"{"rules":{".read":true}}"#
            let set = try await TestHTTPConnection.request(port: server.port, "PUT", "/.settings/rules.json?ns=metrics&auth=owner", body: rules)
            #expect(set.status == 200)
            let read = try await TestHTTPConnection.request(port: server.port, "GET", "/.settings/rules.json?ns=metrics&auth=owner")
            #expect(read.status == 200)
            let anonymous = try await TestHTTPConnection.request(port: server.port, "GET", "/.settings/rules.json?ns=metrics")
            #expect(anonymous.status == 401)
            let broken = try await TestHTTPConnection.request(
                port: server.port, "PUT", "/.settings/rules.json?ns=metrics&auth=owner", body: #"{"rules":{".read":"nonsense("}}"#)
            #expect(broken.status == 400)
            let after = try await Self.scrape(server.port)
            #expect(Self.delta(before, after, "kindling_requests_total", ["action": "rules", "outcome": "ok"]) == 2)
            #expect(Self.delta(before, after, "kindling_requests_total", ["action": "rules", "outcome": "permission_denied"]) == 1)
            #expect(Self.delta(before, after, "kindling_requests_total", ["action": "rules", "outcome": "error"]) == 1)
        }
    }

    /// `kindling_build_info{version}` is 1, with the release the server is.
    @Test func theBuildInfoNamesTheVersion() async throws {
        try await KindlingServer.run(ServerConfiguration(port: 0)) { server in
            let scrape = try await Self.scrape(server.port)
            #expect(scrape.all("kindling_build_info").count == 1)
            #expect(scrape.value("kindling_build_info", ["version": KindlingVersion.current]) == 1)
        }
    }

    @Test func treeSizesAreExportedForTheLargestNamespacesOnly() async throws {
        try await KindlingServer.run(ServerConfiguration(port: 0, metricsTopNamespaces: 2)) { server in
            func write(_ namespace: String, length: Int) async throws {
                let body = "\"" + String(repeating: "x", count: length) + "\""
                let response = try await TestHTTPConnection.request(port: server.port, "PUT", "/v.json?ns=\(namespace)", body: body)
                #expect(response.status == 200)
            }
            try await write("small", length: 10)
            try await write("medium", length: 100)
            try await write("large", length: 300)
            try await write("tiny", length: 1)
            let first = try await Self.scrape(server.port)
            #expect(first.value("kindling_namespaces") == 4)
            let series = first.all("kindling_namespace_tree_bytes")
            #expect(series.count == 2)
            // {"v":"xxx…"}: 8 bytes around the string.
            #expect(first.value("kindling_namespace_tree_bytes", ["namespace": "large"]) == 308)
            #expect(first.value("kindling_namespace_tree_bytes", ["namespace": "medium"]) == 108)

            // `small` grows past both: `medium` leaves the top two and its series goes.
            try await write("small", length: 1000)
            let second = try await Self.scrape(server.port)
            #expect(second.all("kindling_namespace_tree_bytes").count == 2)
            #expect(second.value("kindling_namespace_tree_bytes", ["namespace": "small"]) == 1008)
            #expect(second.value("kindling_namespace_tree_bytes", ["namespace": "large"]) == 308)
            #expect(second.value("kindling_namespace_tree_bytes", ["namespace": "medium"]) == nil)
        }
    }

    @Test func onlyLoopbackOrAnAdminMayReadTheMetrics() throws {
        let remote = try SocketAddress(ipAddress: "10.1.2.3", port: 4000)
        let user = AuthState.overridden(by: .object([JSONMember("uid", .string("alice"))]))
        #expect(MetricsAccess.refusal(remote: remote, relayed: false, auth: .anonymous)?.status == 401)
        #expect(MetricsAccess.refusal(remote: remote, relayed: false, auth: user)?.status == 403)
        #expect(MetricsAccess.refusal(remote: remote, relayed: false, auth: .admin) == nil)
        #expect(MetricsAccess.refusal(remote: nil, relayed: false, auth: .anonymous)?.status == 401)
        for loopback in ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"] {
            #expect(
                MetricsAccess.refusal(remote: try SocketAddress(ipAddress: loopback, port: 1), relayed: false, auth: .anonymous) == nil, "\(loopback)"
            )
            // Through a proxy on the same machine: the caller is whoever the proxy serves.
            #expect(MetricsAccess.refusal(remote: try SocketAddress(ipAddress: loopback, port: 1), relayed: true, auth: .anonymous)?.status == 401)
            #expect(MetricsAccess.refusal(remote: try SocketAddress(ipAddress: loopback, port: 1), relayed: true, auth: .admin) == nil)
        }
        for outside in ["128.0.0.1", "::2", "::ffff:10.0.0.1", "fe80::1"] {
            #expect(MetricsAccess.isLoopback(try SocketAddress(ipAddress: outside, port: 1)) == false, "\(outside)")
        }
    }

    @Test func aRequestRelayedByAProxyOnLoopbackNeedsTheAdmin() async throws {
        try await KindlingServer.run(ServerConfiguration(port: 0)) { server in
            let direct = try await TestHTTPConnection.request(port: server.port, "GET", "/.metrics")
            #expect(direct.status == 200)
            for header in ["X-Forwarded-For", "Forwarded", "X-Real-IP"] {
                let value = header == "Forwarded" ? "for=203.0.113.9" : "203.0.113.9"
                let relayed = try await TestHTTPConnection.request(port: server.port, "GET", "/.metrics", headers: [(header, value)])
                #expect(relayed.status == 401, "\(header)")
            }
            let admin = try await TestHTTPConnection.request(
                port: server.port, "GET", "/.metrics", headers: [("X-Forwarded-For", "203.0.113.9"), ("Authorization", "Bearer owner")])
            #expect(admin.status == 200)
        }
    }

    @Test func refusedRequestsAreLoggedWithTheirReason() async throws {
        let lines = Mutex<[String]>([])
        var logger = Logger(label: "kindling") { label in
            JSONLogHandler(label: label) { bytes in lines.withLock { $0.append(String(decoding: bytes, as: UTF8.self)) } }
        }
        logger.logLevel = .info
        let configuration = ServerConfiguration(port: 0, rules: try RulesDocument.parse(Self.rules), logger: logger)
        try await KindlingServer.run(configuration) { server in
            let denied = try await TestHTTPConnection.request(port: server.port, "PUT", "/locked/a.json?ns=logs", body: "1")
            #expect(denied.status == 401)
            let socket = try await TestClient.connect(port: server.port, namespace: "logs")
            let reply = try await socket.request("p", Self.put("/locked/b", 2))
            #expect(reply.last?["d"]?["b"]?["s"]?.stringValue == "permission_denied")
            let auth = try await socket.request("auth", .object([JSONMember("cred", .string("not-a-token"))]))
            #expect(auth.last?["d"]?["b"]?["s"]?.stringValue == "invalid_token")
            let metrics = try await Self.scrape(server.port)
            #expect(metrics.value("kindling_requests_total", ["action": "auth", "outcome": "error"]) == 1)
            #expect(metrics.value("kindling_requests_total", ["action": "set", "outcome": "permission_denied"]) == 1)
            await socket.close()
        }
        let refusals = try lines.withLock { $0 }.map { try JSONParser.parse($0) }.filter { $0["message"]?.stringValue == "refused a request" }
        #expect(refusals.count == 3)
        let expected: [(String, String, String?)] = [
            ("rest_write", "permission_denied", "/locked/a"), ("set", "permission_denied", "/locked/b"), ("auth", "invalid_token", nil),
        ]
        for (line, (action, refusal, path)) in zip(refusals, expected) {
            #expect(line["level"]?.stringValue == "info")
            #expect(line["metadata"]?["refusal"]?.stringValue == refusal)
            #expect(line["metadata"]?["action"]?.stringValue == action)
            #expect(line["metadata"]?["path"]?.stringValue == path)
            #expect(line["metadata"]?["namespace"]?.stringValue == "logs")
            #expect(line["metadata"]?["connection"]?.stringValue?.hasPrefix("conn-") == true)
        }
    }
}
