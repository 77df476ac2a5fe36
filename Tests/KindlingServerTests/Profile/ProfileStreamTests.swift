import Crypto
import Foundation
import KindlingCore
import KindlingServer
import KindlingTesting
import Testing

/// The profiler stream (`GET /.settings/profile.json`) against a running server: who may open
/// it, the records of what clients do (read as the Firebase CLI reads them, and matching the
/// requests made), a profiler that does not read, and several profilers at once.
@Suite(.timeLimit(.minutes(3)))
struct ProfileStreamTests {
    static let adminSecret = "profile-admin-secret-0123"
    static let hmacSecret = "a-secret-of-at-least-thirty-two-bytes!"
    static let openRules = #"{"rules": {".read": true, ".write": true}}"#

    /// A server that is not in emulator mode: an admin secret, signed user tokens, open rules.
    static func withServer(
        _ adjust: @escaping (inout ServerConfiguration) -> Void = { _ in }, _ body: (KindlingServer, LogLines) async throws -> Void
    ) async throws {
        try await HardeningServer.with(
            { configuration in
                adjust(&configuration)
                var auth = AuthSettings()
                auth.adminSecrets = [adminSecret]
                auth.hmacSecrets = [hmacSecret]
                configuration.auth = auth
                configuration.rules = try? RulesDocument.parse(openRules)
                configuration.eventStreamKeepAlive = .milliseconds(200)
            }, body)
    }

    static func userToken(_ uid: String) -> String {
        func base64URL(_ bytes: some Sequence<UInt8>) -> String {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let now = Int(Date().timeIntervalSince1970)
        let header = base64URL(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let payload = base64URL(Array(#"{"sub":"\#(uid)","iat":\#(now),"exp":\#(now + 3600)}"#.utf8))
        let signature = HMAC<SHA256>.authenticationCode(for: Array("\(header).\(payload)".utf8), using: SymmetricKey(data: Array(hmacSecret.utf8)))
        return "\(header).\(payload).\(base64URL(signature))"
    }

    /// Opens a profiler stream as the Firebase CLI does (`Accept: text/event-stream`, a bearer
    /// credential) and checks its head.
    static func openProfiler(port: Int, namespace: String, credential: String = adminSecret) async throws -> TestHTTPConnection {
        let stream = try await TestHTTPConnection.connect(port: port)
        try await stream.send(
            "GET", "/.settings/profile.json?ns=\(namespace)", headers: [("Accept", "text/event-stream"), ("Authorization", "Bearer \(credential)")])
        let head = try await stream.responseHead()
        #expect(head.status == 200)
        #expect(head.header("content-type") == "text/event-stream; charset=utf-8")
        return stream
    }

    /// Reads event blocks until the records in them number `count`.
    static func records(_ stream: TestHTTPConnection, count: Int) async throws -> [FirebaseProfileRecord] {
        var blocks: [String] = []
        while try FirebaseProfileRecord.records(in: blocks).count < count {
            blocks.append(try await stream.nextEvent(timeout: .seconds(30)).raw)
        }
        return try FirebaseProfileRecord.records(in: blocks)
    }

    @Test func onlyAnAdminMayProfile() async throws {
        try await Self.withServer { server, _ in
            let port = server.port
            let uri = "/.settings/profile.json?ns=p"
            let stream = [("Accept", "text/event-stream")]
            var response = try await TestHTTPConnection.request(port: port, "GET", uri, headers: stream)
            #expect(response.status == 401)
            #expect(try response.json()["error"]?.stringValue == "Permission denied")
            response = try await TestHTTPConnection.request(
                port: port, "GET", uri, headers: stream + [("Authorization", "Bearer \(Self.userToken("ada"))")])
            #expect(response.status == 401)
            response = try await TestHTTPConnection.request(port: port, "GET", uri + "&auth=\(Self.userToken("ada"))", headers: stream)
            #expect(response.status == 401)
            // The emulator's `owner` is no admin outside emulator mode.
            response = try await TestHTTPConnection.request(port: port, "GET", uri, headers: stream + [("Authorization", "Bearer owner")])
            #expect(response.status == 401)
            // Not a stream, or not a GET.
            response = try await TestHTTPConnection.request(port: port, "GET", uri, headers: [("Authorization", "Bearer \(Self.adminSecret)")])
            #expect(response.status == 400)
            response = try await TestHTTPConnection.request(
                port: port, "PUT", uri, headers: [("Authorization", "Bearer \(Self.adminSecret)")], body: "{}")
            #expect(response.status == 405)
            // An admin gets the stream, by header or by `auth=`.
            let profiler = try await Self.openProfiler(port: port, namespace: "p")
            profiler.close()
            let byParameter = try await TestHTTPConnection.connect(port: port)
            defer { byParameter.close() }
            try await byParameter.send("GET", uri + "&auth=\(Self.adminSecret)", headers: stream)
            #expect(try await byParameter.responseHead().status == 200)
        }
    }

    /// In emulator mode the Firebase CLI's `Bearer owner` is the admin, and nobody else is.
    @Test func theFirebaseCLIsOwnerCredentialProfilesAnEmulator() async throws {
        try await HardeningServer.with { server, _ in
            let anonymous = try await TestHTTPConnection.request(
                port: server.port, "GET", "/.settings/profile.json", headers: [("Accept", "text/event-stream")])
            #expect(anonymous.status == 401)
            // As firebase-tools asks it: no `?ns=` (it sends the URL's path alone), so the
            // server's default namespace.
            let profiler = try await Self.openProfiler(port: server.port, namespace: "kindling", credential: "owner")
            defer { profiler.close() }
            #expect(try await TestHTTPConnection.request(port: server.port, "PUT", "/a.json", body: "1").status == 200)
            let records = try await Self.records(profiler, count: 2)
            #expect(records.map(\.name) == ["rest-write", "listener-broadcast"])
        }
    }

    /// Every request made while two profilers listen is one record on both, in the same order,
    /// and the report's totals (counts by kind, bytes up and down, broadcasts and the listeners
    /// they reached) are those of the requests.
    @Test func theRecordsMatchTheRequestsMade() async throws {
        try await Self.withServer { server, logs in
            let port = server.port
            let started = Date().timeIntervalSince1970 * 1000
            let profiler = try await Self.openProfiler(port: port, namespace: "p")
            defer { profiler.close() }
            let second = try await Self.openProfiler(port: port, namespace: "p")
            defer { second.close() }
            #expect(await logs.waitFor("a profiler connected"))

            let listener = try await TestClient.connect(port: port, namespace: "p")
            let writer = try await TestClient.connect(port: port, namespace: "p")
            _ = try await writer.request("auth", .object([JSONMember("cred", .string(Self.adminSecret))]))
            // The listen's data (the location is empty: null), then its answer.
            try await listener.sendRequest("q", .object([JSONMember("p", "/room"), JSONMember("h", "")]))
            let listenBytes = try await listener.nextRawMessage().utf8.count
            #expect(try await listener.nextRawMessage().contains(#""s":"ok""#))
            var pushed = 0
            func push() async throws { pushed += try await listener.nextRawMessage().utf8.count }

            let admin = [("Authorization", "Bearer \(Self.adminSecret)")]
            let writes = 5
            for index in 0..<writes {
                let put = try await TestHTTPConnection.request(
                    port: port, "PUT", "/room/m\(index).json?ns=p", headers: admin, body: #"{"t":"hello"}"#)
                #expect(put.status == 200)
                try await push()
            }
            var downloaded = 0
            let reads = 3
            for _ in 0..<reads {
                let get = try await TestHTTPConnection.request(port: port, "GET", "/room.json?ns=p", headers: admin)
                downloaded += get.body.count
            }
            _ = try await writer.request("p", .object([JSONMember("p", "/room/w"), JSONMember("d", .object([JSONMember("n", 1)]))]))
            try await push()
            _ = try await writer.request("m", .object([JSONMember("p", "/room"), JSONMember("d", .object([JSONMember("u", true)]))]))
            try await push()
            let got = try await writer.request("g", .object([JSONMember("p", "/room/w"), JSONMember("q", .object([]))]))
            #expect(got.last?["d"]?["b"]?["d"] == .object([JSONMember("n", 1)]))
            let patch = try await TestHTTPConnection.request(port: port, "PATCH", "/room.json?ns=p", headers: admin, body: #"{"v":"x"}"#)
            #expect(patch.status == 200)
            try await push()
            _ = try await listener.request("n", .object([JSONMember("p", "/room")]))
            await writer.close()

            // connect ×2, listen, 5 × (write, broadcast), 3 reads, realtime write, update (each
            // with its broadcast), get, REST update and broadcast, unlisten, disconnect.
            let expected = 2 + 1 + 2 * writes + reads + 2 * 2 + 1 + 2 + 1 + 1
            let records = try await Self.records(profiler, count: expected)
            #expect(records.count == expected)
            let again = try await Self.records(second, count: expected)
            #expect(again.map(\.name) == records.map(\.name))

            func named(_ name: String) -> [FirebaseProfileRecord] { records.filter { $0.name == name } }
            #expect(named("concurrent-connect").count == 2)
            #expect(named("concurrent-disconnect").count == 1)
            #expect(named("rest-write").count == writes)
            #expect(named("rest-read").count == reads)
            #expect(named("rest-update").count == 1)
            #expect(named("realtime-write").count == 1)
            #expect(named("realtime-update").count == 1)
            #expect(named("realtime-read").count == 1)
            #expect(named("listener-listen").count == 1)
            #expect(named("listener-unlisten").count == 1)
            let broadcasts = named("listener-broadcast")
            #expect(broadcasts.count == writes + 3)
            // Every broadcast reached the one listener, with exactly the bytes it received.
            #expect(broadcasts.allSatisfy { $0.clientsUpdated == 1 })
            #expect(broadcasts.reduce(0) { $0 + ($1.bytes ?? 0) } == Double(pushed))
            #expect(named("listener-listen").first?.bytes == Double(listenBytes))
            // Uploads: the JSON written; downloads: what the GETs answered.
            #expect(named("rest-write").allSatisfy { $0.bytes == 13 && $0.pathString.hasPrefix("/room/m") })
            #expect(named("realtime-write").first?.bytes == 7)
            #expect(named("realtime-update").first?.bytes == 10)
            #expect(named("rest-update").first?.bytes == 9)
            #expect(named("rest-read").reduce(0) { $0 + ($1.bytes ?? 0) } == Double(downloaded))
            #expect(named("realtime-read").first?.bytes == 7)
            // Everything ran here and now, from loopback, within the rules.
            let ended = Date().timeIntervalSince1970 * 1000
            for record in records {
                #expect(record.timestamp >= started - 1000 && record.timestamp <= ended + 1000, "\(record.name) at \(record.timestamp)")
                #expect((record.millis ?? 0) >= 0)
                #expect(record.allowed != false)
                if record.name != "listener-broadcast" {
                    #expect(record.client?.remoteAddress?.hasPrefix("127.0.0.1:") == true, "\(record.name) has no client address")
                }
            }
            for record in records where record.name.hasPrefix("rest-") || record.name.hasPrefix("realtime-") {
                #expect(record.pendingTime.map { $0 >= 0 } == true, "\(record.name) has no pending time")
            }
            #expect(named("rest-read").allSatisfy { $0.querySet?.count == 1 && $0.unIndexed == false })
            await listener.close()
        }
    }

    /// A profiler that stops reading loses records (counted, and told once it reads again),
    /// never the server's time: a writer's 400 writes, with records of over 20 KB each (their
    /// paths are long), are all acknowledged while it reads nothing.
    @Test func aProfilerThatDoesNotReadDoesNotHoldWritesUp() async throws {
        // A connection that takes nothing is closed after the keep-alive timeout (60 s): longer
        // here, so a loaded machine's slow writes cannot close it before the test looks.
        try await Self.withServer({ $0.keepAliveTimeout = .seconds(600) }) { server, logs in
            let port = server.port
            let raw = try await RawConnection.connect(port: port, receiveBufferBytes: 4096)
            defer { raw.close() }
            try await raw.send(
                "GET /.settings/profile.json?ns=slow HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nAuthorization: Bearer \(Self.adminSecret)\r\n\r\n"
            )
            #expect(await raw.waitFor("text/event-stream"))
            raw.pauseReading()
            let deep = (0..<30).map { "k\($0)" + String(repeating: "x", count: 700) }.joined(separator: "/")
            let writer = try await TestClient.connect(port: port, namespace: "slow")
            _ = try await writer.request("auth", .object([JSONMember("cred", .string(Self.adminSecret))]))
            let writes = 400
            for index in 1..<writes {
                try await writer.sendRequest("p", .object([JSONMember("p", .string("/\(deep)/n\(index)")), JSONMember("d", .number(Double(index)))]))
            }
            let last = try await writer.request(
                "p", .object([JSONMember("p", .string("/\(deep)/n\(writes)")), JSONMember("d", .number(Double(writes)))]), timeout: .seconds(60))
            #expect(last.last?["d"]?["b"]?["s"]?.stringValue == "ok")
            await writer.close()
            #expect(await logs.waitFor("were left out", timeout: .seconds(30)))
            // Once it reads again, it is told how many it lost.
            raw.resumeReading()
            #expect(await raw.waitFor("event: gap", timeout: .seconds(60)))
        }
    }

    /// A profiler that goes away stops the profiling; a new one gets only what happens after it.
    @Test func aProfilerThatGoesAwayEndsItsStream() async throws {
        try await Self.withServer { server, logs in
            let port = server.port
            let admin = [("Authorization", "Bearer \(Self.adminSecret)")]
            let first = try await Self.openProfiler(port: port, namespace: "gone")
            #expect(try await TestHTTPConnection.request(port: port, "PUT", "/a.json?ns=gone", headers: admin, body: "1").status == 200)
            #expect(try await Self.records(first, count: 2).map(\.name) == ["rest-write", "listener-broadcast"])
            first.close()
            #expect(await logs.waitFor("a profiler disconnected"))
            #expect(try await TestHTTPConnection.request(port: port, "PUT", "/b.json?ns=gone", headers: admin, body: "2").status == 200)
            let next = try await Self.openProfiler(port: port, namespace: "gone")
            defer { next.close() }
            #expect(try await TestHTTPConnection.request(port: port, "PUT", "/c.json?ns=gone", headers: admin, body: "3").status == 200)
            let records = try await Self.records(next, count: 2)
            #expect(records.map(\.pathString) == ["/c", "/c"])
        }
    }
}
