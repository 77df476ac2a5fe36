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

    /// A `<script>` sends no `Origin`: JSONP is served only to a page whose `Referer` (or,
    /// without one, `Sec-Fetch-Site`) shows it may read, so a foreign page cannot load a local
    /// database as a script.
    @Test func jsonpIsServedOnlyToAllowedPages() async throws {
        try await HardeningServer.with { server, _ in
            _ = try await TestHTTPConnection.request(port: server.port, "PUT", "/secret.json?ns=t", body: #""k""#)
            let refused: [[(String, String)]] = [
                [("Referer", "https://evil.example/page"), ("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Dest", "script")],
                [("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Dest", "script")],
                [("Sec-Fetch-Site", "same-site")],
                [("Referer", "https://evil.example/")],
                [("Referer", "not a url")],
                // Neither header: the page cannot be told (plain http, no referrer).
                [],
            ]
            for headers in refused {
                for uri in ["/secret.json?ns=t&callback=steal", "/secret.json?ns=t&%63allback=steal"] {
                    let response = try await TestHTTPConnection.request(port: server.port, "GET", uri, headers: headers)
                    #expect(response.status == 403 && !response.text.contains("steal("), "\(headers) \(uri)")
                }
            }
            let served: [[(String, String)]] = [
                [("Sec-Fetch-Site", "same-origin")],
                [("Sec-Fetch-Site", "none")],
                [("Referer", "http://localhost:3000/app"), ("Sec-Fetch-Site", "same-site")],
            ]
            for headers in served {
                let response = try await TestHTTPConnection.request(port: server.port, "GET", "/secret.json?ns=t&callback=cb", headers: headers)
                #expect(response.status == 200 && response.text == #"cb("k");"#, "\(headers)")
            }
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
            let response = try await TestHTTPConnection.request(
                port: server.port, "GET", "/a.json?ns=t", headers: [("Origin", "https://app.example")])
            #expect(response.status == 200 && response.header("access-control-allow-origin") == "https://app.example")
            #expect(
                try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t", headers: [("Origin", "https://other.example")]).status
                    == 403)
        }
        try await HardeningServer.with({ $0.corsOrigins = ["*"] }) { server, _ in
            let response = try await TestHTTPConnection.request(
                port: server.port, "GET", "/a.json?ns=t", headers: [("Origin", "https://any.example")])
            #expect(response.status == 200 && response.header("access-control-allow-origin") == "*")
            let raw = try await RawConnection.connect(port: server.port)
            defer { raw.close() }
            try await raw.upgradeToWebSocket(headers: [("Origin", "https://any.example")])
        }
    }

    @Test func onlyLoopbackHostNamesAreServedOnLoopback() async throws {
        try await HardeningServer.with { server, _ in
            let port = server.port
            #expect(
                try await TestHTTPConnection.request(port: port, "GET", "/a.json?ns=t", headers: [("Host", "rebind.evil.example:\(port)")]).status
                    == 403)
            #expect(
                try await TestHTTPConnection.request(port: port, "GET", "/a.json?ns=t", headers: [("Host", "localhost.evil.example")]).status == 403)
            for host in ["localhost:\(port)", "127.0.0.1", "[::1]:\(port)", "LOCALHOST"] {
                #expect(try await TestHTTPConnection.request(port: port, "GET", "/a.json?ns=t", headers: [("Host", host)]).status == 200, "\(host)")
            }
            // The namespace still comes from a *.localhost Host.
            _ = try await TestHTTPConnection.request(port: port, "PUT", "/v.json", headers: [("Host", "mydb.localhost:\(port)")], body: "7")
            #expect(try await TestHTTPConnection.request(port: port, "GET", "/v.json?ns=mydb").text == "7")
        }
        try await HardeningServer.with({ $0.allowedHosts = ["db.internal"] }) { server, _ in
            let response = try await TestHTTPConnection.request(
                port: server.port, "GET", "/a.json?ns=t", headers: [("Host", "db.internal:\(server.port)")])
            #expect(response.status == 200)
        }
    }
}
