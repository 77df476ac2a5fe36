import KindlingCore
import KindlingServer
import KindlingTesting
import Testing

/// Fan-out over real sockets: every listener, on whichever event loop, gets each write's event
/// in write order, whole (one frame or several), and the writer gets each of its events before
/// that write's `ok`.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct FanoutOrderTests {
    static let writes = 30
    /// The write sent as a value long enough to go out in several frames.
    static let bigWrite = 15

    static func value(_ write: Int) -> JSONValue {
        write == bigWrite ? .string(String(repeating: "x", count: 40_000) + "\(write)") : .number(Double(write))
    }

    @Test func pipelinedWritesReachEveryListenerInOrderAndTheWriterBeforeEachOk() async throws {
        try await RealtimeProtocolTests.withServer { server in
            let listen = try JSONParser.parse(#"{"p":"/room","h":""}"#)
            let writer = try await TestClient.connect(port: server.port)
            #expect(try await writer.request("q", listen).last.map(RealtimeProtocolTests.describe) == "r1:ok")
            var listeners: [TestClient] = []
            for _ in 0..<24 {
                let listener = try await TestClient.connect(port: server.port)
                _ = try await listener.request("q", listen)
                listeners.append(listener)
            }
            // Sent without waiting, so the server dispatches them in few blocks.
            for write in 1...Self.writes {
                try await writer.sendRequest("p", .object([JSONMember("p", .string("/room")), JSONMember("d", Self.value(write))]))
            }
            var expected: [String] = []
            var seen: [String] = []
            for write in 1...Self.writes {
                expected += ["d \(JSONWriter.string(Self.value(write)))", "r\(write + 1):ok"]
                for _ in 0..<2 {
                    let message = try await writer.nextMessage()
                    seen.append(
                        message["d"]?["r"] != nil
                            ? RealtimeProtocolTests.describe(message) : "d \(message["d"]?["b"]?["d"].map(JSONWriter.string) ?? "?")")
                }
            }
            #expect(seen == expected)
            for listener in listeners {
                var values: [JSONValue] = []
                for _ in 1...Self.writes { values.append(try await listener.nextMessage()["d"]?["b"]?["d"] ?? .null) }
                #expect(values == (1...Self.writes).map(Self.value))
                await listener.close()
            }
            await writer.close()
        }
    }
}
