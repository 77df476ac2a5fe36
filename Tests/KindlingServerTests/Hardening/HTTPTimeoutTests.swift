import KindlingCore
import KindlingServer
import KindlingTesting
import Testing

/// No HTTP connection stays open on a client's silence: header, body and keep-alive timeouts.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct HTTPTimeoutTests {
    static func short(_ configuration: inout ServerConfiguration) {
        // Short, but long enough for a loaded machine to send a first request in time.
        configuration.headerTimeout = .seconds(1)
        configuration.bodyTimeout = .seconds(1)
        configuration.keepAliveTimeout = .seconds(1)
    }

    /// For tests whose first request must go out: a loaded machine can take over a second between
    /// the connect and the send (CI did once), so only the first request's headers have long.
    static func shortAfterAFirstRequest(_ configuration: inout ServerConfiguration) {
        short(&configuration)
        configuration.headerTimeout = .seconds(30)
    }

    @Test func aSilentConnectionIsClosed() async throws {
        try await HardeningServer.with(Self.short) { server, _ in
            let raw = try await RawConnection.connect(port: server.port)
            defer { raw.close() }
            #expect(await raw.waitForClose(timeout: .seconds(5)))
        }
    }

    @Test func headersSentAByteAtATimeAreCutOff() async throws {
        try await HardeningServer.with(Self.short) { server, _ in
            let raw = try await RawConnection.connect(port: server.port)
            defer { raw.close() }
            // On a loaded machine the server's 1 s limit may end the connection before even this
            // first line goes out; the connection must end either way.
            try? await raw.send("GET /a.json HTTP/1.1\r\n")
            // Keeps sending, slower than a request could complete in time.
            for _ in 0..<100 where !raw.isClosed {
                try? await raw.send("X")
                // Deliberate pacing: a byte every 50 ms, too slow to finish the headers in time.
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(raw.isClosed)
        }
    }

    @Test func anIdleKeptAliveConnectionIsClosedAfterItsResponse() async throws {
        try await HardeningServer.with(Self.shortAfterAFirstRequest) { server, _ in
            let raw = try await RawConnection.connect(port: server.port)
            defer { raw.close() }
            let asked = ContinuousClock.now
            try await raw.send("GET /a.json?ns=t HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(await raw.waitFor("\r\n\r\nnull"))
            // Open after the response until the keep-alive timeout, which runs from the response
            // (a stalled machine may look only after it passed), then closed.
            #expect(!raw.isClosed || ContinuousClock.now - asked >= .seconds(1))
            #expect(await raw.waitForClose(timeout: .seconds(5)))
        }
    }

    @Test func anUnfinishedBodyIsCutOff() async throws {
        try await HardeningServer.with(Self.short) { server, _ in
            let raw = try await RawConnection.connect(port: server.port)
            defer { raw.close() }
            // On a loaded machine the header timeout may end the connection before this goes
            // out; the connection must end either way, with nothing stored.
            try? await raw.send("PUT /a.json?ns=t HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n[1,2,")
            #expect(await raw.waitForClose(timeout: .seconds(5)))
            #expect(!raw.receivedText.contains("200 OK"))
        }
    }

    @Test func aClientThatTakesNoneOfItsAnswersIsClosed() async throws {
        try await HardeningServer.with(Self.shortAfterAFirstRequest) { server, logs in
            let value = "\"" + String(repeating: "v", count: 256 * 1024) + "\""
            #expect(try await TestHTTPConnection.request(port: server.port, "PUT", "/v.json?ns=t&print=silent", body: value).status == 204)
            let raw = try await RawConnection.connect(port: server.port, receiveBufferBytes: 4096)
            defer { raw.close() }
            raw.pauseReading()
            try await raw.send(String(repeating: "GET /v.json?ns=t HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", count: 100))
            #expect(await logs.waitFor("took none of its answers", timeout: .seconds(10)))
        }
    }

    @Test func anEventStreamAndAWebSocketOutliveTheTimeouts() async throws {
        try await HardeningServer.with(Self.short) { server, _ in
            let stream = try await TestHTTPConnection.connect(port: server.port)
            defer { stream.close() }
            try await stream.send("GET", "/s.json?ns=test", headers: [("Accept", "text/event-stream")])
            #expect(try await stream.responseHead().status == 200)
            let realtime = try await TestClient.connect(port: server.port)
            // Deliberate idle window past every timeout (1 s): both must NOT be closed for it.
            try await Task.sleep(for: .milliseconds(2500))
            let ok = try await realtime.request("p", .object([.init("p", .string("/s")), .init("d", .number(1))]))
            #expect(ok.last?["d"]?["b"]?["s"]?.stringValue == "ok")
            var sawValue = false
            for _ in 0..<10 where !sawValue {
                sawValue = try await stream.nextEvent().data?.contains(#""data":1"#) == true
            }
            #expect(sawValue)
            await realtime.close()
        }
    }
}
