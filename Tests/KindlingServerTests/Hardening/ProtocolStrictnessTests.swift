import KindlingCore
import KindlingServer
import KindlingTesting
import Testing

/// RFC 6455 rules SwiftNIO's decoder leaves to the application: invalid UTF-8 in a text frame
/// closes with 1007; unmasked client frames, RSV bits and reserved opcodes with 1002.
@Suite(.timeLimit(.minutes(1)))
struct ProtocolStrictnessTests {
    /// A set request for `/<key>` whose value is a string of `raw` bytes.
    static func setRequest(_ key: String, raw: [UInt8]) -> [UInt8] {
        Array(#"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/\#(key)","d":""#.utf8) + raw + Array(#""}}}"#.utf8)
    }

    static func closeCode(after frame: [UInt8], port: Int) async throws -> Int? {
        let raw = try await RawConnection.connect(port: port)
        defer { raw.close() }
        try await raw.upgradeToWebSocket()
        try await raw.send(frame)
        _ = await raw.waitForClose(timeout: .seconds(5))
        return raw.closeCode
    }

    @Test func invalidUTF8InATextFrameClosesWith1007AndStoresNothing() async throws {
        try await HardeningServer.with { server, _ in
            let frame = RawConnection.frame(opcode: 1, Self.setRequest("bad", raw: [0x61, 0xFF, 0xFE, 0x62]))
            #expect(try await Self.closeCode(after: frame, port: server.port) == 1007)
            // Split across fragments, the message is checked whole.
            let first = RawConnection.frame(
                opcode: 1, Array(#"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/bad","d":"\#u{E9}"#.utf8.dropLast()), fin: false)
            let rest = RawConnection.frame(opcode: 0, [0x21] + Array(#""}}}"#.utf8))
            #expect(try await Self.closeCode(after: first + rest, port: server.port) == 1007)
            let stored = try await TestHTTPConnection.request(port: server.port, "GET", "/bad.json?ns=test")
            #expect(stored.text == "null")
        }
    }

    @Test func validUTF8IsStoredAsSent() async throws {
        try await HardeningServer.with { server, _ in
            let raw = try await RawConnection.connect(port: server.port)
            defer { raw.close() }
            try await raw.upgradeToWebSocket()
            try await raw.send(RawConnection.frame(opcode: 1, Self.setRequest("good", raw: Array("é✓😀".utf8))))
            #expect(await raw.waitFor(#""s":"ok""#))
            let stored = try await TestHTTPConnection.request(port: server.port, "GET", "/good.json?ns=test")
            #expect(stored.text == #""é✓😀""#)
        }
    }

    /// `JSON.stringify` of a string cut through an emoji writes a lone surrogate escape. The
    /// write is taken with U+FFFD in its place, in a value, a key and a listen's path, and the
    /// connection goes on: refusing the message closed it, and the SDK sent the same write again
    /// at every reconnect, forever, with every later write stuck behind it.
    @Test func aLoneSurrogateEscapeIsTakenAsTheReplacementCharacter() async throws {
        try await HardeningServer.with { server, _ in
            let client = try await TestClient.connect(port: server.port, namespace: "test")
            try await client.send(#"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/chat/1","d":"see you \ud83d"}}}"#)
            #expect(try await client.nextMessage()["d"]?["b"]?["s"]?.stringValue == "ok")
            try await client.send(#"{"t":"d","d":{"r":2,"a":"m","b":{"p":"/chat","d":{"\ude00bob":1}}}}"#)
            #expect(try await client.nextMessage()["d"]?["b"]?["s"]?.stringValue == "ok")
            try await client.send(#"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/chat/\ude00bob","h":""}}}"#)
            let listened = try await client.nextMessage()
            #expect(listened["d"]?["b"]?["p"]?.stringValue == "chat/\u{FFFD}bob")
            #expect(listened["d"]?["b"]?["d"] == .number(1))
            #expect(try await client.nextMessage()["d"]?["b"]?["s"]?.stringValue == "ok")
            let stored = try await TestHTTPConnection.request(port: server.port, "GET", "/chat.json?ns=test")
            #expect(try stored.json() == .object([JSONMember("1", .string("see you \u{FFFD}")), JSONMember("\u{FFFD}bob", .number(1))]))
            #expect(await !client.waitForClose(timeout: .milliseconds(200)))
            // Over REST the same escape is taken alike.
            let put = try await TestHTTPConnection.request(port: server.port, "PUT", "/rest.json?ns=test", body: #""cut \ud83d""#)
            #expect(put.status == 200)
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/rest.json?ns=test").json() == .string("cut \u{FFFD}"))
            await client.close()
        }
    }

    @Test(arguments: [
        ("text", RawConnection.frame(opcode: 1, Array("0".utf8))),
        ("binary", RawConnection.frame(opcode: 2, [0])),
        ("fragmented text", RawConnection.frame(opcode: 1, Array("0".utf8), fin: false)),
    ])
    func aDataFrameInsideAFragmentedMessageClosesWith1002AndRunsNeither(name: String, frame: [UInt8]) async throws {
        try await HardeningServer.with { server, _ in
            let first = RawConnection.frame(opcode: 1, Array(#"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a","d":1}}"#.utf8), fin: false)
            let end = RawConnection.frame(opcode: 0, Array("}".utf8))
            let code = try await Self.closeCode(after: first + frame + end, port: server.port)
            #expect(code == 1002, "\(name)")
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=test").text == "null")
        }
    }

    @Test(arguments: [
        ("unmasked", RawConnection.frame(opcode: 1, Array("0".utf8), masked: false)),
        ("rsv1", RawConnection.frame(opcode: 1, Array("0".utf8), rsv: 4)),
        ("rsv3", RawConnection.frame(opcode: 1, Array("0".utf8), rsv: 1)),
        ("reserved data opcode", RawConnection.frame(opcode: 3, Array("0".utf8))),
        ("reserved control opcode", RawConnection.frame(opcode: 0xB, [])),
    ])
    func forbiddenFramesCloseWith1002(name: String, frame: [UInt8]) async throws {
        try await HardeningServer.with { server, _ in
            let code = try await Self.closeCode(after: frame, port: server.port)
            #expect(code == 1002, "\(name)")
        }
    }
}
