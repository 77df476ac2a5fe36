import KindlingServer
import KindlingTesting
import Logging
import NIOCore
import Testing

/// RFC 6455's rules for the opening handshake and the closing one: what the server upgrades,
/// how it answers each close frame a client may (or may not) send, and that a server shutting
/// down says so with a close frame.
@Suite(.timeLimit(.minutes(1)))
struct WebSocketHandshakeAndCloseTests {
    static func closeFrame(_ code: Int?, reason: [UInt8] = []) -> [UInt8] {
        let payload = code.map { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } ?? []
        return RawConnection.frame(opcode: 8, payload + reason)
    }

    @Test(arguments: [
        ("no code", closeFrame(nil), 1000),
        ("normal", closeFrame(1000), 1000),
        ("going away", closeFrame(1001, reason: Array("bye".utf8)), 1001),
        ("application code", closeFrame(4001), 4001),
        ("one byte", RawConnection.frame(opcode: 8, [0x03]), 1002),
        ("below 1000", closeFrame(999), 1002),
        ("reserved 1004", closeFrame(1004), 1002),
        ("local-only 1005", closeFrame(1005), 1002),
        ("local-only 1006", closeFrame(1006), 1002),
        ("local-only 1015", closeFrame(1015), 1002),
        ("unassigned 2000", closeFrame(2000), 1002),
        ("5000", closeFrame(5000), 1002),
        ("reason not UTF-8", closeFrame(1000, reason: [0xC3, 0x28]), 1007),
    ])
    func aCloseFrameIsEchoedOrRefused(name: String, frame: [UInt8], expected: Int) async throws {
        try await HardeningServer.with { server, _ in
            let code = try await ProtocolStrictnessTests.closeCode(after: frame, port: server.port)
            #expect(code == expected, "\(name)")
        }
    }

    /// An opening handshake for `/.ws` with `headers` (each line ending in CRLF) and `key`.
    static func handshake(method: String = "GET", headers: String = "Host: 127.0.0.1\r\nConnection: Upgrade\r\n", key: String) -> String {
        "\(method) /.ws?v=5&ns=test HTTP/1.1\r\n\(headers)Upgrade: websocket\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
            + "Content-Length: 0\r\n\r\n"
    }

    /// Sends `request` on a new connection and waits for the head of the answer.
    static func send(_ request: String, port: Int) async throws -> RawConnection {
        let raw = try await RawConnection.connect(port: port)
        try await raw.send(request)
        #expect(await raw.waitFor("\r\n\r\n"))
        return raw
    }

    @Test(arguments: [
        ("POST", "dGhlIHNhbXBsZSBub25jZQ=="),
        ("GET", "short"),
        ("GET", "dGhlIHNhbXBsZSBub25jZQ"),
        ("GET", "dGhlIHNhbXBsZSBub25jZ!=="),
        ("GET", "dGhlIHNhbXBsZSBub25jZQ==dGhl"),
        ("GET", "AAAAAAAAAAAAAAAAAAAAAB=="),
    ])
    func aMalformedOpeningHandshakeIsNotUpgraded(method: String, key: String) async throws {
        try await HardeningServer.with { server, _ in
            let raw = try await Self.send(Self.handshake(method: method, key: key), port: server.port)
            defer { raw.close() }
            #expect(raw.receivedText.hasPrefix("HTTP/1.1 400"), "\(method) \(key): \(raw.receivedText.prefix(40))")
            // What follows would not be read as HTTP: the connection closes after the answer.
            #expect(raw.receivedText.lowercased().contains("connection: close"))
            #expect(await raw.waitForClose(timeout: .seconds(5)))
        }
        // The well-formed handshake still upgrades, with a key padded by optional whitespace.
        try await HardeningServer.with { server, _ in
            let raw = try await RawConnection.connect(port: server.port)
            defer { raw.close() }
            try await raw.upgradeToWebSocket()
            let padded = try await Self.send(
                Self.handshake(headers: "Host: 127.0.0.1\r\nConnection: keep-alive, Upgrade\r\n", key: "AAAAAAAAAAAAAAAAAAAAAA== \t"),
                port: server.port)
            defer { padded.close() }
            #expect(padded.receivedText.hasPrefix("HTTP/1.1 101"))
        }
        // Without `Connection: Upgrade` or without `Host`, no upgrade.
        for headers in ["Host: 127.0.0.1\r\nConnection: keep-alive\r\n", "Connection: Upgrade\r\n"] {
            try await HardeningServer.with { server, _ in
                let raw = try await Self.send(Self.handshake(headers: headers, key: "AAAAAAAAAAAAAAAAAAAAAA=="), port: server.port)
                defer { raw.close() }
                #expect(!raw.receivedText.hasPrefix("HTTP/1.1 101"), "\(headers)")
            }
        }
    }

    @Test func anUpgradeRequestForAnotherPathIsAnsweredThenTheConnectionCloses() async throws {
        try await HardeningServer.with { server, _ in
            let raw = try await RawConnection.connect(port: server.port)
            defer { raw.close() }
            var request = "GET /a.json?ns=test HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            request += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            try await raw.send(request + "PUT /a.json?ns=test HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\n\r\n1")
            #expect(await raw.waitForClose(timeout: .seconds(5)))
            #expect(raw.receivedText.hasPrefix("HTTP/1.1 200"))
            #expect(raw.receivedText.lowercased().contains("connection: close"))
            // The request after it was not taken as part of an upgrade: it was never read.
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=test").text == "null")
        }
    }

    @Test func shuttingDownSendsGoingAwayToEveryRealtimeConnection() async throws {
        let server = try await KindlingServer.start(ServerConfiguration(port: 0, logger: Logger(label: "kindling-test")))
        var connections: [RawConnection] = []
        for _ in 0..<3 {
            let raw = try await RawConnection.connect(port: server.port)
            try await raw.upgradeToWebSocket()
            #expect(await raw.waitFor(#""t":"h""#))
            connections.append(raw)
        }
        try await server.shutdown()
        for raw in connections {
            #expect(await raw.waitForClose(timeout: .seconds(5)))
            #expect(raw.closeCode == 1001)
            raw.close()
        }
    }

    /// A client still receiving a large answer gets all of it, then the close frame, if it
    /// reads within the time the shutdown allows, even with requests the server never read.
    @Test func shuttingDownSendsWhatWasAnsweredBeforeTheCloseFrame() async throws {
        let server = try await KindlingServer.start(ServerConfiguration(port: 0, logger: Logger(label: "kindling-test")))
        let big = String(repeating: "x", count: 8 << 20)
        _ = try await TestHTTPConnection.request(port: server.port, "PUT", "/big.json?ns=test&print=silent", body: "\"\(big)\"")
        let raw = try await RawConnection.connect(port: server.port, receiveBufferBytes: 4096)
        defer { raw.close() }
        try await raw.upgradeToWebSocket()
        #expect(await raw.waitFor(#""t":"h""#))
        // The client stops reading a little way into the answer (on its own event loop, so a
        // busy machine cannot let it read the whole answer first), and the server, with far
        // more than its pause mark waiting, stops reading too: the backlog it then counts shows it.
        raw.pauseReading(afterReceiving: raw.receivedCount + 256 * 1024)
        try await raw.send(RawConnection.frame(opcode: 1, Array(#"{"t":"d","d":{"r":1,"a":"g","b":{"p":"/big","q":{}}}}"#.utf8)))
        #expect(await raw.waitFor("xxxxxxxx"))
        #expect(try await eventually { try await PrometheusText.backlogBytes(port: server.port) > 0 })
        // Requests the paused server has not read: closing over them must not reset the
        // connection, which would throw away the rest of the answer.
        for request in 2...50 {
            try await raw.send(RawConnection.frame(opcode: 1, Array(#"{"t":"d","d":{"r":\#(request),"a":"g","b":{"p":"/small","q":{}}}}"#.utf8)))
        }
        let port = server.port
        let stopped = Task { try await server.shutdown(within: .seconds(10)) }
        // Read again once the shutdown is under way: it closes the listener, then the connections.
        let listening = {
            guard let probe = try? await RawConnection.connect(port: port) else { return false }
            probe.close()
            return true
        }
        #expect(try await eventually(within: .seconds(5), every: .milliseconds(10)) { await !listening() })
        raw.resumeReading()
        #expect(await raw.waitForClose(timeout: .seconds(8)))
        #expect(raw.receivedCount > 8 << 20)
        #expect(raw.closeCode == 1001)
        _ = try await stopped.value
    }
}
