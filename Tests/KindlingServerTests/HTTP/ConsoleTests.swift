import KindlingConsole
import KindlingServer
import KindlingTesting
import Logging
import Testing

/// The web console's files at `/.console`: each with its content type, a strict
/// Content-Security-Policy and ETag revalidation; and the console's same-origin requests
/// getting through the browser guard.
@Suite(.timeLimit(.minutes(1)))
struct ConsoleTests {
    static func withServer(allowedHosts: [String] = [], _ body: (KindlingServer) async throws -> Void) async throws {
        try await KindlingTesting.withServer(label: "console-tests", { $0.allowedHosts = allowedHosts }, body)
    }

    @Test func servesEveryAssetWithItsType() async throws {
        let expected = [
            "index.html": "text/html; charset=utf-8", "console.css": "text/css; charset=utf-8", "app.js": "text/javascript; charset=utf-8",
            "api.js": "text/javascript; charset=utf-8", "tree.js": "text/javascript; charset=utf-8", "query.js": "text/javascript; charset=utf-8",
            "rules.js": "text/javascript; charset=utf-8", "activity.js": "text/javascript; charset=utf-8",
            "history.js": "text/javascript; charset=utf-8", "icon.svg": "image/svg+xml",
        ]
        #expect(Set(ConsoleAsset.all.keys) == Set(expected.keys))
        try await Self.withServer { server in
            let http = try await TestHTTPConnection.connect(port: server.port)
            defer { http.close() }
            for (name, type) in expected {
                let response = try await http.request("GET", "/.console/\(name)")
                #expect(response.status == 200, "\(name)")
                #expect(response.header("Content-Type") == type, "\(name)")
                #expect(response.body == ConsoleAsset.all[name]?.bytes, "\(name)")
                #expect(response.header("Content-Security-Policy")?.contains("script-src 'self'") == true)
                #expect(response.header("X-Content-Type-Options") == "nosniff")
            }
            for page in ["/.console", "/.console/"] {
                let response = try await http.request("GET", page)
                #expect(response.header("Content-Type") == "text/html; charset=utf-8")
                #expect(response.text.contains("<script type=\"module\" src=\"/.console/app.js\">"))
            }
        }
    }

    @Test func revalidatesByETagAndRefusesTheRest() async throws {
        try await Self.withServer { server in
            let http = try await TestHTTPConnection.connect(port: server.port)
            defer { http.close() }
            let first = try await http.request("GET", "/.console/app.js")
            let etag = try #require(first.header("ETag"))
            #expect(etag == ConsoleAsset.all["app.js"]?.etag)
            let again = try await http.request("GET", "/.console/app.js", headers: [("If-None-Match", etag)])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
            let other = try await http.request("GET", "/.console/app.js", headers: [("If-None-Match", "\"0000\"")])
            #expect(other.status == 200)
            #expect(try await http.request("GET", "/.console/missing.js").status == 404)
            #expect(try await http.request("GET", "/.console/../secret").status == 404)
            let post = try await http.request("POST", "/.console/app.js", body: "{}")
            #expect(post.status == 405)
            #expect(post.header("Allow") == "GET")
        }
    }

    /// The console is a handful of files: it stays within its 150 KB budget.
    @Test func staysSmall() {
        let total = ConsoleAsset.all.values.reduce(0) { $0 + $1.bytes.count }
        #expect(total > 10_000)
        #expect(total <= 150 * 1024)
    }

    /// A page served by this server under an allowed host name may write to it (a browser sends
    /// `Origin` on every write, even same-origin); another origin still may not.
    @Test func sameOriginRequestsPassTheBrowserGuard() async throws {
        try await Self.withServer(allowedHosts: ["console.test"]) { server in
            let host = "console.test:\(server.port)"
            let own = try await TestHTTPConnection.request(
                port: server.port, "PUT", "/greeting.json", headers: [("Host", host), ("Origin", "http://\(host)")], body: "\"hi\"")
            #expect(own.status == 200)
            let other = try await TestHTTPConnection.request(
                port: server.port, "PUT", "/greeting.json", headers: [("Host", host), ("Origin", "http://elsewhere.test")], body: "\"no\"")
            #expect(other.status == 403)
            let stored = try await TestHTTPConnection.request(port: server.port, "GET", "/greeting.json", headers: [("Host", host)])
            #expect(stored.text == "\"hi\"")
        }
    }
}
