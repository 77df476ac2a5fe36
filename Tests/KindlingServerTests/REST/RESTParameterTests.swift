import KindlingCore
@testable import KindlingServer
import KindlingTesting
import Testing

/// The REST parameters beyond queries: `print`, `format`, `shallow`, `timeout`, `writeSizeLimit`,
/// `download` and `callback`.
/// A value the server cannot honour is a 400 that names the parameter, never ignored.
@Suite(.timeLimit(.minutes(2)))
struct RESTParameterTests {
    @Test(arguments: ["10", "abc", "0ms", "0s", "16min", "900001ms", "1h", "-5s", "1.5s", "9999999999min", "10 s", "１０s"])
    func aTimeoutThatDoesNotParseIsRefused(timeout: String) async throws {
        try await RESTTests.withServer { server in
            let encoded = timeout.addingPercentEncodingForQuery()
            let response = try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t&timeout=\(encoded)")
            #expect(response.status == 400, "\(timeout)")
            #expect(response.text.contains("timeout"))
        }
    }

    @Test(arguments: [
        ("print", "bogus"), ("print", "PRETTY"), ("print", ""), ("format", "bogus"), ("format", "plain"), ("shallow", "1"), ("shallow", "yes"),
    ])
    func aPrintFormatOrShallowItCannotTakeIsRefusedNaming(parameter: String, value: String) async throws {
        try await RESTTests.withServer { server in
            _ = try await TestHTTPConnection.request(port: server.port, "PUT", "/q.json?ns=t", body: #"{"a":{"b":1}}"#)
            for method in ["GET", "PUT"] {
                let response = try await TestHTTPConnection.request(
                    port: server.port, method, "/q.json?ns=t&\(parameter)=\(value)", body: method == "PUT" ? "2" : nil)
                #expect(response.status == 400, "\(method) \(parameter)=\(value)")
                #expect(try response.json()["error"]?.stringValue?.hasPrefix(parameter) == true, "\(response.text)")
            }
            // Nothing was written.
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/q.json?ns=t").text == #"{"a":{"b":1}}"#)
        }
    }

    @Test(arguments: ["/a%ZZb.json", "/a%C3b.json", "/a%.json", "/x/%ff/y.json"])
    func aPathThatIsNotPercentEncodedUTF8IsRefusedAndNothingIsWritten(path: String) async throws {
        try await RESTTests.withServer { server in
            for method in ["PUT", "GET", "DELETE"] {
                let response = try await TestHTTPConnection.request(
                    port: server.port, method, path + "?ns=t", body: method == "PUT" ? #""bad""# : nil)
                #expect(response.status == 400, "\(method) \(path)")
                #expect(response.text.contains("percent-encoded UTF-8"), "\(response.text)")
            }
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/.json?ns=t").text == "null")
        }
    }

    @Test func shallowFalseReadsEverything() async throws {
        try await RESTTests.withServer { server in
            _ = try await TestHTTPConnection.request(port: server.port, "PUT", "/q.json?ns=t", body: #"{"a":{"b":1}}"#)
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/q.json?ns=t&shallow=false").text == #"{"a":{"b":1}}"#)
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/q.json?ns=t&shallow=true").text == #"{"a":true}"#)
        }
    }

    @Test func aReadWithinItsTimeoutIsAnsweredAndOneOverItIsRefused() async throws {
        try await RESTTests.withServer { server in
            let members = (0..<50_000).map { #""k\#($0)":"value number \#($0)""# }.joined(separator: ",")
            let put = try await TestHTTPConnection.request(port: server.port, "PUT", "/big.json?ns=t&print=silent", body: "{\(members)}")
            #expect(put.status == 204)
            for limit in ["500ms", "30s", "15min"] {
                let response = try await TestHTTPConnection.request(port: server.port, "GET", "/big/k7.json?ns=t&timeout=\(limit)")
                #expect(response.status == 200 && response.text == #""value number 7""#, "\(limit)")
            }
            // Rendering 50,000 children takes well over a millisecond.
            let slow = try await TestHTTPConnection.request(port: server.port, "GET", "/big.json?ns=t&timeout=1ms")
            #expect(slow.status == 400)
            #expect(try slow.json()["error"]?.stringValue?.contains("timeout") == true)
        }
    }

    @Test func writeSizeLimitIsCheckedAndEnforcedBeforeAnythingIsWritten() async throws {
        try await RESTTests.withServer { server in
            var response = try await TestHTTPConnection.request(port: server.port, "PUT", "/a.json?ns=t&writeSizeLimit=huge", body: "1")
            #expect(response.status == 400 && response.text.contains("writeSizeLimit"))
            for limit in ["tiny", "small", "medium", "large", "unlimited"] {
                response = try await TestHTTPConnection.request(
                    port: server.port, "PUT", "/a.json?ns=t&writeSizeLimit=\(limit)", body: #""\#(limit)""#)
                #expect(response.status == 200, "\(limit)")
            }
            // Over what `tiny` allows in its one second: refused, and nothing written.
            let big = "\"" + String(repeating: "x", count: RESTWriteSizeLimit.bytesPerSecond + 1) + "\""
            response = try await TestHTTPConnection.request(
                port: server.port, "PUT", "/a.json?ns=t&writeSizeLimit=tiny", body: big, timeout: .seconds(60))
            #expect(response.status == 400 && response.text.contains("tiny"))
            response = try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t")
            #expect(response.text == #""unlimited""#)
        }
    }

    @Test func downloadAnswersAnAttachment() async throws {
        try await RESTTests.withServer { server in
            _ = try await TestHTTPConnection.request(port: server.port, "PUT", "/a.json?ns=t", body: #"{"b":1}"#)
            var response = try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t&download=backup.json")
            #expect(response.status == 200 && response.text == #"{"b":1}"#)
            #expect(response.header("content-disposition") == #"attachment; filename="backup.json""#)
            response = try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t&download=%22d%C3%A9j%C3%A0%22.json")
            #expect(response.header("content-disposition") == #"attachment; filename="\"d_j_\".json"; filename*=UTF-8''%22d%C3%A9j%C3%A0%22.json"#)
            for bad in ["", "a%0D%0ASet-Cookie:x=1", String(repeating: "n", count: 256), "gpj%E2%80%AE.exe"] {
                response = try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t&download=\(bad)")
                #expect(response.status == 400 && response.text.contains("download"), "\(bad)")
            }
            response = try await TestHTTPConnection.request(port: server.port, "PUT", "/a.json?ns=t&download=x.json", body: "2")
            #expect(response.status == 400)
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t").text == #"{"b":1}"#)
        }
    }

    @Test func callbackAnswersAScript() async throws {
        try await RESTTests.withServer { server in
            _ = try await TestHTTPConnection.request(port: server.port, "PUT", "/a.json?ns=t", body: #"{"b":"</script>"}"#)
            // As a page of the server's own origin loads it (others are the browser policy's
            // business: BrowserAccessTests).
            let page = [("Sec-Fetch-Site", "same-origin")]
            var response = try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t&callback=app.$on_data2", headers: page)
            #expect(response.status == 200)
            #expect(response.text == #"app.$on_data2({"b":"</script>"});"#)
            #expect(response.header("content-type") == "application/javascript; charset=utf-8")
            #expect(response.header("x-content-type-options") == "nosniff")
            response = try await TestHTTPConnection.request(port: server.port, "GET", "/a/missing.json?ns=t&callback=cb", headers: page)
            #expect(response.text == "cb(null);")
            for bad in [
                "alert(1)//", "a..b", "1cb", "cb%3B", "", "a%20b", String(repeating: "c", count: 129), "eval", "window.eval", "setTimeout",
                "a.constructor", "new", "location.assign",
            ] {
                response = try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t&callback=\(bad)", headers: page)
                #expect(response.status == 400 && response.text.contains("callback"), "\(bad)")
            }
            response = try await TestHTTPConnection.request(port: server.port, "PATCH", "/a.json?ns=t&callback=cb", headers: page, body: #"{"c":1}"#)
            #expect(response.status == 400)
            // An event stream is not a script or a file: refused rather than ignored.
            for parameter in ["callback=cb", "download=a.json"] {
                response = try await TestHTTPConnection.request(
                    port: server.port, "GET", "/a.json?ns=t&\(parameter)", headers: page + [("Accept", "text/event-stream")])
                #expect(response.status == 400, "\(parameter)")
            }
        }
    }
}

extension String {
    /// Percent-encodes everything but ASCII letters and digits, for a query parameter's value.
    fileprivate func addingPercentEncodingForQuery() -> String {
        utf8.map { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                ? String(UnicodeScalar(byte)) : "%" + String(byte, radix: 16, uppercase: true).leftPadded()
        }.joined()
    }

    private func leftPadded() -> String { count == 1 ? "0" + self : self }
}
