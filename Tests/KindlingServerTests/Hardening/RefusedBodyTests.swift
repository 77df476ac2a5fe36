import KindlingServer
import KindlingTesting
import Testing

/// A request body refused while it is still arriving (over the REST size limit, or beyond the
/// budget of requests in progress) is answered at once, and the answer reaches a client that
/// sends its whole body before it reads, as Python's http.client and requests do: the server
/// closes its side after the answer and reads the rest of the body, dropping it, then closes.
/// Closing with the body unread resets the connection, which makes the client's kernel throw
/// the answer away and fails the client's next send.
@Suite(.timeLimit(.minutes(2)), .serialized)
struct RefusedBodyTests {
    /// Sends `bytes` of body in parts of 64 KB; throws once the connection has been reset.
    static func sendBody(_ bytes: Int, on connection: RawConnection) async throws {
        let part = [UInt8](repeating: UInt8(ascii: "1"), count: 65_536)
        var left = bytes
        while left > 0 {
            try await connection.send(Array(part.prefix(left)))
            left -= min(left, part.count)
        }
    }

    static func head(_ path: String, contentLength: Int) -> String {
        "PUT \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(contentLength)\r\n\r\n"
    }

    /// True once the server has closed the connection (within `timeout`): once it has, a byte
    /// sent is answered with a reset, and the send after fails.
    static func serverClosed(_ connection: RawConnection, timeout: Duration = .seconds(10)) async -> Bool {
        (try? await eventually(within: timeout) { (try? await connection.send("\r\n")) == nil }) == true
    }

    @Test func aBodyOverTheSizeLimitIsAnsweredAndTheRestOfItRead() async throws {
        try await HardeningServer.with({ $0.maxRESTBodyBytes = 100_000 }) { server, _ in
            let client = try await RawConnection.connect(port: server.port, halfClosure: true)
            defer { client.close() }
            try await client.send(Self.head("/a.json?ns=t", contentLength: 4_000_000))
            #expect(await client.waitFor("HTTP/1.1 413"))
            try await Self.sendBody(4_000_000, on: client)
            #expect(await client.waitForInputClosed())
            #expect(client.receivedText.hasSuffix(#"{"error":"Request body exceeds the 100000-byte limit for a REST write"}"#))
            #expect(await Self.serverClosed(client))
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/.json?ns=t").text == "null")
        }
    }

    @Test func aBodyThatCouldNeverFitTheBudgetIsAnsweredAndTheRestOfItRead() async throws {
        try await HardeningServer.with({ $0.inFlightBudgetBytes = 1024 * 1024 }) { server, _ in
            let client = try await RawConnection.connect(port: server.port, halfClosure: true)
            defer { client.close() }
            try await client.send(Self.head("/a.json?ns=t", contentLength: 2_000_000))
            #expect(await client.waitFor("HTTP/1.1 413"))
            try await Self.sendBody(2_000_000, on: client)
            #expect(await client.waitForInputClosed())
            #expect(client.receivedText.contains("--max-unfinished-mb"))
            #expect(await Self.serverClosed(client))
        }
    }

    /// Two bodies hold most of the budget; a third, refused with 503 after about 11 MB (more of
    /// it than the kernel's buffers hold is still to come), is sent to its end and its client
    /// reads the 503 and `Retry-After`; nothing of it is written.
    @Test func aBodyTheBudgetCannotHoldNowIsAnsweredAndTheRestOfItRead() async throws {
        try await HardeningServer.with({ $0.inFlightBudgetBytes = 64 << 20 }) { server, logs in
            var holders: [RawConnection] = []
            defer { for holder in holders { holder.close() } }
            for name in ["a", "b"] {
                let holder = try await RawConnection.connect(port: server.port)
                holders.append(holder)
                try await holder.send(Self.head("/\(name).json?ns=t", contentLength: 30_000_000) + "\"" + String(repeating: "a", count: 28_000_000))
            }
            // Once the server has read both (56,000,002 bytes held).
            #expect(try await eventually { try await PrometheusText.unfinishedBytes(port: server.port) >= 56_000_002 })
            let client = try await RawConnection.connect(port: server.port, halfClosure: true)
            defer { client.close() }
            try await client.send(Self.head("/c.json?ns=t", contentLength: 30_000_000))
            try await Self.sendBody(30_000_000, on: client)
            #expect(await client.waitForInputClosed())
            #expect(client.receivedText.hasPrefix("HTTP/1.1 503"))
            #expect(client.receivedText.contains("Retry-After: 1"))
            #expect(logs.contains("refusing a request body"))
            #expect(await Self.serverClosed(client))
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/c.json?ns=t").text == "null")
        }
    }

    /// A refused body that never ends does not keep its connection: the body timeout closes it.
    @Test func aRefusedBodyThatNeverEndsIsClosedByTheBodyTimeout() async throws {
        try await HardeningServer.with({
            $0.maxRESTBodyBytes = 100_000
            $0.bodyTimeout = .seconds(1)
        }) { server, _ in
            let client = try await RawConnection.connect(port: server.port, halfClosure: true)
            defer { client.close() }
            let headSent = ContinuousClock.now
            try await client.send(Self.head("/a.json?ns=t", contentLength: 4_000_000))
            #expect(await client.waitFor("HTTP/1.1 413"))
            // The timeout runs from the head, so on a stalled machine it may close the connection
            // while part of the body is still being sent, and the send fails; never before it.
            do {
                try await Self.sendBody(200_000, on: client)
            } catch {
                #expect(ContinuousClock.now - headSent >= .seconds(1), "the connection closed before the body timeout: \(error)")
            }
            #expect(await Self.serverClosed(client, timeout: .seconds(30)))
        }
    }
}
