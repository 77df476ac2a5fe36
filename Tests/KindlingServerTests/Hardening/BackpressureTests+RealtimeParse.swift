import KindlingCore
import KindlingProtocol
import KindlingServer
import KindlingTesting
import Testing

/// What parsing a realtime message takes is reserved from the budget of requests in progress
/// before it is parsed, as for a REST body, and held until its namespace has taken it.
extension BackpressureTests {
    static func zeros(_ count: Int) -> JSONValue { .array(Array(repeating: .number(0), count: count)) }
    static func put(_ path: String, _ data: JSONValue) -> JSONValue { .object([JSONMember("p", .string(path)), JSONMember("d", data)]) }
    static func status(_ reply: [JSONValue]) -> String? { reply.last?["d"]?["b"]?["s"]?.stringValue }

    /// A message of more small values than the budget can ever parse is refused as too big,
    /// naming its request (split into pieces, as the SDKs send a long message, or whole): the
    /// write fails, nothing is written, and the connection goes on. One that fits is written,
    /// and its share is given back once it is taken, so the next fits too.
    @Test func whatParsingARealtimeMessageTakesIsReservedBeforeItIsParsed() async throws {
        try await HardeningServer.with({ $0.inFlightBudgetBytes = 1024 * 1024 }) { server, logs in
            let client = try await TestClient.connect(port: server.port, namespace: "t")
            defer { Task { await client.close() } }
            // 10,001 values at 128 bytes each: more than 1 MiB, in a message of 20 KB (two
            // pieces) or of 16 KB (one frame; 8,101 values fit only without its own bytes and
            // their parsed copy).
            for count in [10_000, 8_100] {
                let refused = try await client.request("p", Self.put("/a", Self.zeros(count)))
                #expect(Self.status(refused) == "too_big", "\(count)")
                #expect(refused.last?["d"]?["b"]?["d"]?.stringValue?.contains("--max-unfinished-mb") == true)
            }
            #expect(logs.contains("too large to parse"))
            #expect(
                try await client.request("g", .object([JSONMember("p", .string("/a")), JSONMember("q", .object([]))])).last?["d"]?["b"]?["d"] == .null
            )
            // Half a megabyte of parsing, three times in a row: each gives its share back.
            for index in 0..<3 {
                #expect(Self.status(try await client.request("p", Self.put("/a", Self.zeros(4_000)))) == "ok", "\(index)")
            }
            // A long string is one value, whatever it holds; its parsed copy counts as its length.
            let text = JSONValue.string(String(repeating: "[:,", count: 100_000))
            #expect(Self.status(try await client.request("p", Self.put("/c", text))) == "ok")
            // Clients that send a write and hang up: their shares come back once their writes
            // are taken, so a write that needs most of the budget is then taken (until then it
            // is told to try again later: its connection closes with 1013).
            for index in 0..<10 {
                let gone = try await TestClient.connect(port: server.port, namespace: "t")
                try await gone.sendRequest("p", Self.put("/gone/\(index)", Self.zeros(4_000)))
                await gone.abort()
            }
            var status: String?
            try await eventually(within: .seconds(10), every: .milliseconds(50)) {
                let writer = try await TestClient.connect(port: server.port, namespace: "t")
                status = Self.status((try? await writer.request("p", Self.put("/b", Self.zeros(7_000)))) ?? [])
                await writer.close()
                return status == "ok"
            }
            #expect(status == "ok")
        }
    }

    /// A small message is first weighed as if every other byte were a value, with no pass over
    /// it; when that does not fit, its values are counted, so a small budget still takes a
    /// message of few values and refuses only one of too many.
    @Test func aSmallMessageIsCountedWhenItsWorstCaseDoesNotFit() async throws {
        try await HardeningServer.with({ $0.inFlightBudgetBytes = 100 * 1024 }) { server, _ in
            let client = try await TestClient.connect(port: server.port, namespace: "t")
            defer { Task { await client.close() } }
            // 3 KB, worst case 1,500 values (192 KB): it is one string.
            #expect(Self.status(try await client.request("p", Self.put("/s", .string(String(repeating: "x", count: 3_000))))) == "ok")
            // 2 KB of 1,000 values (128 KB): never fits.
            #expect(Self.status(try await client.request("p", Self.put("/z", Self.zeros(1_000)))) == "too_big")
            #expect(Self.status(try await client.request("p", Self.put("/z", Self.zeros(500)))) == "ok")
        }
    }

    /// While the budget is held by other requests, a message that would fit later closes its
    /// connection with 1013 (try again later), unparsed; the SDK reconnects and sends it again,
    /// and once the budget is free it is taken.
    @Test func aRealtimeMessageThatDoesNotFitNowClosesWithTryAgainLater() async throws {
        try await HardeningServer.with({ $0.inFlightBudgetBytes = 1024 * 1024 }) { server, logs in
            let holder = try await RawConnection.connect(port: server.port)
            defer { holder.close() }
            try await holder.send(
                "PUT /held.json?ns=t HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 400000\r\n\r\n\"" + String(repeating: "h", count: 300_000))
            // Once the server has read the held body.
            #expect(try await eventually { try await PrometheusText.unfinishedBytes(port: server.port) >= 300_001 })
            let client = try await RawConnection.connect(port: server.port)
            defer { client.close() }
            try await client.upgradeToWebSocket(namespace: "t")
            // 6,000 values: ~790 KB of parsing, beside the 300 KB held.
            let message = ClientMessage.request(number: 1, action: "p", body: Self.put("/late", Self.zeros(6_000)))
            try await client.send(RawConnection.frame(opcode: 1, Array(message.utf8)))
            #expect(await client.waitForClose(timeout: .seconds(5)))
            #expect(client.closeCode == 1013)
            #expect(logs.contains("too many requests in progress"))
            // The held body finishes; the message sent again is written.
            try await holder.send(String(repeating: "h", count: 99_998) + "\"")
            #expect(await holder.waitFor("HTTP/1.1 200"))
            let again = try await TestClient.connect(port: server.port, namespace: "t")
            defer { Task { await again.close() } }
            #expect(Self.status(try await again.request("p", Self.put("/late", Self.zeros(6_000)))) == "ok")
        }
    }
}
