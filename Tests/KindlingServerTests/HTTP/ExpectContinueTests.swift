import KindlingTesting
import Testing

@testable import KindlingServer

/// `Expect: 100-continue`: curl sends it before a body over 1 MB and, unanswered, waits a
/// second before sending the body anyway.
@Suite(.timeLimit(.minutes(1)))
struct ExpectContinueTests {
    @Test func aRequestThatMayBeTakenIsToldToGoOnAndItsBodyIsWritten() async throws {
        try await HardeningServer.with({ _ in }) { server, _ in
            let raw = try await RawConnection.connect(port: server.port)
            defer { raw.close() }
            try await raw.send("PUT /a.json?ns=t HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 7\r\n\r\n")
            #expect(await raw.waitFor("HTTP/1.1 100 Continue\r\n\r\n"))
            try await raw.send(#""hello""#)
            #expect(await raw.waitFor("HTTP/1.1 200"))
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t").text == #""hello""#)
        }
    }

    @Test func aBodyThatIsTooLargeGetsItsRefusalInstead() async throws {
        try await HardeningServer.with({ _ in }) { server, _ in
            let raw = try await RawConnection.connect(port: server.port)
            defer { raw.close() }
            try await raw.send("PUT /a.json?ns=t HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 300000000\r\n\r\n")
            #expect(await raw.waitFor("HTTP/1.1 413"))
            #expect(await !raw.waitFor("100 Continue", timeout: .milliseconds(100)))
        }
    }
}
