import KindlingCore
import KindlingServer
import KindlingTesting
import Testing

/// A web page cannot reach a loopback server: only loopback (and configured) origins pass CORS
/// and the WebSocket upgrade, and only loopback (and configured) Host names are served.
@Suite(.timeLimit(.minutes(1)))
struct BrowserAccessTests {
    @Test func aForeignOriginIsRefusedForRESTPreflightAndWebSocket() async throws {
        try await HardeningServer.with { server, _ in
            let evil = [("Origin", "https://evil.example")]
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t", headers: evil).status == 403)
            #expect(try await TestHTTPConnection.request(port: server.port, "DELETE", "/.json?ns=t", headers: evil).status == 403)
            let preflight = try await TestHTTPConnection.request(
                port: server.port, "OPTIONS", "/a.json?ns=t", headers: evil + [("Access-Control-Request-Method", "DELETE")])
            #expect(preflight.status == 403)
            #expect(preflight.header("access-control-allow-origin") == nil)
            let raw = try await RawConnection.connect(port: server.port)
            defer { raw.close() }
            await #expect(throws: RawConnectionError.self) { try await raw.upgradeToWebSocket(headers: evil) }
            #expect(raw.receivedText.hasPrefix("HTTP/1.1 403"))
        }
    }

    @Test func loopbackOriginsAreAllowedAndEchoed() async throws {
        try await HardeningServer.with { server, _ in
            for origin in ["http://localhost:3000", "https://127.0.0.1:8443", "http://[::1]:5173", "http://localhost"] {
                let response = try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t", headers: [("Origin", origin)])
                #expect(response.status == 200)
                #expect(response.header("access-control-allow-origin") == origin)
                #expect(response.header("vary") == "Origin")
            }
            let raw = try await RawConnection.connect(port: server.port)
            defer { raw.close() }
            try await raw.upgradeToWebSocket(headers: [("Origin", "http://localhost:3000")])
            // Without an Origin (not a browser), nothing changes.
            let plain = try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t")
            #expect(plain.status == 200)
            #expect(plain.header("access-control-allow-origin") == "*")
            // Look-alike origins are not loopback.
            for origin in ["http://localhost.evil.example", "http://127.0.0.1.evil.example:80", "null", "file://"] {
                #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t", headers: [("Origin", origin)]).status == 403)
            }
        }
    }

    @Test func configuredOriginsAndTheWildcard() async throws {
        try await HardeningServer.with({ $0.corsOrigins = ["https://app.example"] }) { server, _ in
            let response = try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t", headers: [("Origin", "https://app.example")])
            #expect(response.status == 200 && response.header("access-control-allow-origin") == "https://app.example")
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t", headers: [("Origin", "https://other.example")]).status == 403)
        }
        try await HardeningServer.with({ $0.corsOrigins = ["*"] }) { server, _ in
            let response = try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t", headers: [("Origin", "https://any.example")])
            #expect(response.status == 200 && response.header("access-control-allow-origin") == "*")
            let raw = try await RawConnection.connect(port: server.port)
            defer { raw.close() }
            try await raw.upgradeToWebSocket(headers: [("Origin", "https://any.example")])
        }
    }

    @Test func onlyLoopbackHostNamesAreServedOnLoopback() async throws {
        try await HardeningServer.with { server, _ in
            let port = server.port
            #expect(try await TestHTTPConnection.request(port: port, "GET", "/a.json?ns=t", headers: [("Host", "rebind.evil.example:\(port)")]).status == 403)
            #expect(try await TestHTTPConnection.request(port: port, "GET", "/a.json?ns=t", headers: [("Host", "localhost.evil.example")]).status == 403)
            for host in ["localhost:\(port)", "127.0.0.1", "[::1]:\(port)", "LOCALHOST"] {
                #expect(try await TestHTTPConnection.request(port: port, "GET", "/a.json?ns=t", headers: [("Host", host)]).status == 200, "\(host)")
            }
            // The namespace still comes from a *.localhost Host.
            _ = try await TestHTTPConnection.request(port: port, "PUT", "/v.json", headers: [("Host", "mydb.localhost:\(port)")], body: "7")
            #expect(try await TestHTTPConnection.request(port: port, "GET", "/v.json?ns=mydb").text == "7")
        }
        try await HardeningServer.with({ $0.allowedHosts = ["db.internal"] }) { server, _ in
            let response = try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t", headers: [("Host", "db.internal:\(server.port)")])
            #expect(response.status == 200)
        }
    }
}
