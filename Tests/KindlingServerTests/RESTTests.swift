import KindlingCore
import KindlingServer
import KindlingTesting
import Logging
import Testing

/// The REST API at `/<path>.json` over real sockets.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct RESTTests {
    static func withServer(maxBodyBytes: Int = 256 * 1024 * 1024, _ body: (KindlingServer) async throws -> Void) async throws {
        try await KindlingTesting.withServer(
            { configuration in
                configuration.maxRESTBodyBytes = maxBodyBytes
                configuration.eventStreamKeepAlive = .milliseconds(200)
            }, body)
    }

    @Test func everyMethod() async throws {
        try await Self.withServer { server in
            let http = try await TestHTTPConnection.connect(port: server.port)
            defer { http.close() }
            var response = try await http.request("PUT", "/users/jack.json?ns=t", body: #"{"first":"Jack","last":"Sparrow","n":[1,2]}"#)
            #expect(response.status == 200)
            #expect(response.header("content-type") == "application/json; charset=utf-8")
            #expect(response.header("content-length") == String(response.body.count))
            #expect(response.text == #"{"first":"Jack","last":"Sparrow","n":[1,2]}"#)
            response = try await http.request("GET", "/users/jack/first.json?ns=t")
            #expect(response.text == #""Jack""#)
            response = try await http.request("GET", "/missing.json?ns=t")
            #expect(response.status == 200 && response.text == "null")
            response = try await http.request("POST", "/users/jack/log.json?ns=t", body: #""ahoy""#)
            let name = try #require(try response.json()["name"]?.stringValue)
            #expect(name.count == 20)
            response = try await http.request("GET", "/users/jack/log/\(name).json?ns=t")
            #expect(response.text == #""ahoy""#)
            response = try await http.request("PATCH", "/users/jack.json?ns=t", body: #"{"last":"Jones","n/0":null,"log":null}"#)
            #expect(response.text == #"{"last":"Jones","n/0":null,"log":null}"#)
            response = try await http.request("GET", "/users/jack.json?ns=t")
            #expect(response.text == #"{"first":"Jack","last":"Jones","n":[null,2]}"#)
            response = try await http.request("DELETE", "/users/jack/n.json?ns=t")
            #expect(response.status == 200 && response.text == "null")
            response = try await http.request("PUT", "/users/jack/first.json?ns=t&print=silent", body: #""J""#)
            #expect(response.status == 204 && response.body.isEmpty && response.header("content-length") == nil)
            response = try await http.request("GET", "/users.json?ns=t&print=pretty")
            #expect(response.text == "{\n  \"jack\" : {\n    \"first\" : \"J\",\n    \"last\" : \"Jones\"\n  }\n}\n")
            response = try await http.request("GET", "/users.json?ns=t&print=silent")
            #expect(response.status == 204)
        }
    }

    @Test func shallowExportAndServerValues() async throws {
        try await Self.withServer { server in
            let http = try await TestHTTPConnection.connect(port: server.port)
            defer { http.close() }
            _ = try await http.request("PUT", "/.json?ns=t", body: #"{"a":{"deep":1},"b":{"c":2},"c":3,"d":{".value":4,".priority":1}}"#)
            #expect(try await http.request("GET", "/.json?ns=t&shallow=true").text == #"{"a":true,"b":true,"c":true,"d":true}"#)
            #expect(try await http.request("GET", "/c.json?ns=t&shallow=true").text == "3")
            // firebase-tools: the first N keys after a raw key, with no orderBy.
            #expect(try await http.request("GET", "/.json?ns=t&shallow=true&limitToFirst=2&startAfter=a").text == #"{"b":true,"c":true}"#)
            #expect(try await http.request("GET", "/d.json?ns=t&format=export").text == #"{".value":4,".priority":1}"#)
            #expect(try await http.request("GET", "/d.json?ns=t").text == "4")
            let response = try await http.request("PUT", "/n.json?ns=t", body: #"{"at":{".sv":"timestamp"},"x":{".sv":{"increment":2}}}"#)
            #expect(try response.json()["x"] == .number(2))
            #expect((try response.json()["at"]?.numberValue ?? 0) > 1_600_000_000_000)
        }
    }

    @Test func queries() async throws {
        try await Self.withServer { server in
            let http = try await TestHTTPConnection.connect(port: server.port)
            defer { http.close() }
            _ = try await http.request("PUT", "/d.json?ns=t", body: #"{"a":{"h":3},"b":{"h":1},"c":{"h":2},"e":{"h":"x"}}"#)
            #expect(try await http.request("GET", #"/d.json?ns=t&orderBy=%22h%22&limitToFirst=2"#).text == #"{"b":{"h":1},"c":{"h":2}}"#)
            #expect(try await http.request("GET", "/d.json?ns=t&orderBy=%22$key%22&startAt=%22c%22").text == #"{"c":{"h":2},"e":{"h":"x"}}"#)
            #expect(try await http.request("GET", "/d.json?ns=t&orderBy=%22h%22&equalTo=9").text == "null")
            let bad = try await http.request("GET", "/d.json?ns=t&limitToFirst=1")
            #expect(bad.status == 400)
            #expect(bad.text == #"{"error":"orderBy must be defined when other query parameters are defined"}"#)
            #expect(try await http.request("GET", "/d.json?ns=t&orderBy=h").status == 400)
        }
    }

    @Test func etags() async throws {
        try await Self.withServer { server in
            let http = try await TestHTTPConnection.connect(port: server.port)
            defer { http.close() }
            var response = try await http.request("GET", "/v.json?ns=t", headers: [("X-Firebase-ETag", "true")])
            #expect(response.header("etag") == "null_etag")
            response = try await http.request("PUT", "/v.json?ns=t", headers: [("if-match", "null_etag")], body: "1")
            #expect(response.status == 200)
            let first = try #require(response.header("etag"))
            #expect(first != "null_etag" && first.count == 28)
            response = try await http.request("GET", "/v.json?ns=t", headers: [("X-Firebase-ETag", "true")])
            #expect(response.header("etag") == first)
            response = try await http.request("GET", "/v.json?ns=t", headers: [("if-none-match", first)])
            #expect(response.status == 304 && response.body.isEmpty && response.header("etag") == first)
            response = try await http.request("GET", "/v.json?ns=t", headers: [("if-none-match", "other")])
            #expect(response.status == 200 && response.text == "1" && response.header("etag") == first)
            response = try await http.request("PUT", "/v.json?ns=t", headers: [("if-match", "null_etag")], body: "2")
            #expect(response.status == 412 && response.text == "1" && response.header("etag") == first)
            response = try await http.request("DELETE", "/v.json?ns=t", headers: [("if-match", "\"nope\"")])
            #expect(response.status == 412 && response.text == "1")
            response = try await http.request("DELETE", "/v.json?ns=t", headers: [("if-match", "\"\(first)\"")])
            #expect(response.status == 200 && response.text == "null" && response.header("etag") == "null_etag")
            #expect(try await http.request("PATCH", "/v.json?ns=t", headers: [("if-match", first)], body: #"{"a":1}"#).status == 400)
        }
    }

    @Test func badInputIsRefusedAndWritesNothing() async throws {
        try await Self.withServer(maxBodyBytes: 1024) { server in
            let http = try await TestHTTPConnection.connect(port: server.port)
            defer { http.close() }
            func expectError(_ response: TestHTTPResponse, _ status: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
                #expect(response.status == status, sourceLocation: sourceLocation)
                #expect(try response.json()["error"]?.stringValue?.isEmpty == false, sourceLocation: sourceLocation)
            }
            try expectError(try await http.request("GET", "/a"), 404)
            #expect(try await http.request("GET", "/a").text == #"{"error":"append .json to your request URI to use the REST API"}"#)
            try expectError(try await http.request("PUT", "/a.json?ns=t", body: #"{"x":"#), 400)
            try expectError(try await http.request("PUT", "/a.json?ns=t", body: #"{"ok":1,"b.d":1}"#), 400)
            try expectError(try await http.request("PUT", "/a.json?ns=t", body: ""), 400)
            try expectError(try await http.request("PATCH", "/a.json?ns=t", body: "[1]"), 400)
            try expectError(try await http.request("PATCH", "/a.json?ns=t", body: #"{"x":1,"x/y":2}"#), 400)
            try expectError(try await http.request("PUT", "/a$b.json?ns=t", body: "1"), 400)
            try expectError(try await http.request("PUT", "/a.json?ns=t", body: #"{"t":{".sv":"bogus"}}"#), 400)
            let deep = String(repeating: #"{"k":"#, count: 40) + "1" + String(repeating: "}", count: 40)
            try expectError(try await http.request("PUT", "/a.json?ns=t", body: deep), 400)
            try expectError(try await http.request("TRACE", "/a.json?ns=t"), 405)
            try expectError(try await http.request("POST", "/a.json?ns=t", headers: [("X-HTTP-Method-Override", "BREW")], body: "1"), 405)
            #expect(try await http.request("GET", "/.json?ns=t").text == "null")
            // An oversized body is refused from its Content-Length, without being read.
            let big = try await TestHTTPConnection.connect(port: server.port)
            try await big.send("PUT", "/a.json?ns=t", headers: [("Content-Length", "1000000")])
            let refused = try await big.responseHead()
            #expect(refused.status == 413)
            #expect(await big.waitForClose())
            // …and a chunked one once it passes the limit.
            let chunked = try await TestHTTPConnection.connect(port: server.port)
            try await chunked.send(
                "PUT", "/a.json?ns=t", headers: [("Transfer-Encoding", "chunked")], body: "\"" + String(repeating: "x", count: 2000) + "\"")
            #expect(try await chunked.responseHead().status == 413)
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/.json?ns=t").text == "null")
        }
    }

    @Test func methodOverrideNamespacesAndCORS() async throws {
        try await Self.withServer { server in
            let http = try await TestHTTPConnection.connect(port: server.port)
            defer { http.close() }
            _ = try await http.request("PUT", "/a.json?ns=one", body: "1")
            _ = try await http.request("PUT", "/a.json", headers: [("Host", "two.localhost:\(server.port)")], body: "2")
            #expect(try await http.request("GET", "/a.json?ns=one").text == "1")
            #expect(try await http.request("GET", "/a.json?ns=two").text == "2")
            #expect(try await http.request("GET", "/a.json").text == "null")  // the default namespace
            _ = try await http.request("POST", "/a.json?ns=one", headers: [("X-HTTP-Method-Override", "DELETE")])
            #expect(try await http.request("GET", "/a.json?ns=one").text == "null")
            _ = try await http.request("POST", "/a.json?ns=one&x-http-method-override=PUT", body: "3")
            #expect(try await http.request("GET", "/a.json?ns=one").text == "3")
            let preflight = try await http.request("OPTIONS", "/a.json", headers: [("Access-Control-Request-Method", "PUT")])
            #expect(preflight.status == 204)
            #expect(preflight.header("access-control-allow-origin") == "*")
            #expect(preflight.header("access-control-allow-methods")?.contains("PATCH") == true)
            let auth = try await http.request(
                "GET", "/a.json?ns=one&auth=secret&auth_variable_override=%7B%22uid%22%3A%22u1%22%7D", headers: [("Authorization", "Bearer owner")])
            #expect(auth.text == "3")
        }
    }
}
