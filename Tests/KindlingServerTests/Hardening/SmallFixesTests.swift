import KindlingCore
import KindlingServer
import KindlingTesting
import Testing

/// The small items of the hardening issue: unknown methods, POST of null, and a cut-off event
/// stream being logged.
@Suite(.timeLimit(.minutes(1)))
struct SmallFixesTests {
    @Test func aMethodTheParserDoesNotKnowAnswers405WithTheErrorJSON() async throws {
        try await HardeningServer.with { server, _ in
            let raw = try await RawConnection.connect(port: server.port)
            defer { raw.close() }
            try await raw.send("BREW /pot.json HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
            #expect(await raw.waitForClose())
            let text = raw.receivedText
            #expect(text.hasPrefix("HTTP/1.1 405"))
            #expect(text.lowercased().contains("allow: get, put, post, patch, delete, options"))
            let bytes = raw.received
            let end = try #require(bytes.firstRange(of: Array("\r\n\r\n".utf8)))
            #expect(try JSONParser.parse(Array(bytes[end.upperBound...]))["error"]?.stringValue != nil)
        }
    }

    @Test func aPostOfNullIsRefused() async throws {
        try await HardeningServer.with { server, _ in
            let response = try await TestHTTPConnection.request(port: server.port, "POST", "/list.json?ns=t", body: "null")
            #expect(response.status == 400)
            #expect(try response.json()["error"]?.stringValue != nil)
            let empty = try await TestHTTPConnection.request(port: server.port, "POST", "/list.json?ns=t", body: "{}")
            #expect(empty.status == 400)
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/list.json?ns=t").text == "null")
            let value = try await TestHTTPConnection.request(port: server.port, "POST", "/list.json?ns=t", body: "1")
            #expect(value.status == 200)
        }
    }

    @Test func anEventStreamReaderCutOffForFallingBehindIsLogged() async throws {
        try await HardeningServer.with({ $0.maxPendingOutboundBytes = 64 * 1024 }) { server, logs in
            let reader = try await RawConnection.connect(port: server.port, receiveBufferBytes: 4096)
            defer { reader.close() }
            try await reader.send("GET /feed.json?ns=t HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
            #expect(await reader.waitFor("event: put"))
            reader.pauseReading()
            let writer = try await TestHTTPConnection.connect(port: server.port)
            defer { writer.close() }
            let big = "\"" + String(repeating: "x", count: 100_000) + "\""
            for index in 0..<400 where !logs.contains("event-stream reader that fell behind") {
                // Distinct paths: events for one path may be merged while a reader is behind.
                _ = try await writer.request("PUT", "/feed/\(index).json?ns=t&print=silent", body: big)
            }
            #expect(await logs.waitFor("event-stream reader that fell behind"))
        }
    }
}
