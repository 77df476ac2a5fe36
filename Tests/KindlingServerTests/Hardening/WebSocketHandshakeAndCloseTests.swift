import KindlingServer
import KindlingTesting
import Logging
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

    @Test(arguments: [
        ("POST", "dGhlIHNhbXBsZSBub25jZQ=="),
        ("GET", "short"),
        ("GET", "dGhlIHNhbXBsZSBub25jZQ"),
        ("GET", "dGhlIHNhbXBsZSBub25jZ!=="),
        ("GET", "dGhlIHNhbXBsZSBub25jZQ==dGhl"),
    ])
    func aMalformedOpeningHandshakeIsNotUpgraded(method: String, key: String) async throws {
        try await HardeningServer.with { server, _ in
            let raw = try await RawConnection.connect(port: server.port)
            defer { raw.close() }
            var request = "\(method) /.ws?v=5&ns=test HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            request += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\nContent-Length: 0\r\n\r\n"
            try await raw.send(request)
            #expect(await raw.waitFor("\r\n\r\n"))
            #expect(raw.receivedText.hasPrefix("HTTP/1.1 400"), "\(method) \(key): \(raw.receivedText.prefix(40))")
        }
        // The well-formed handshake still upgrades.
        try await HardeningServer.with { server, _ in
            let raw = try await RawConnection.connect(port: server.port)
            defer { raw.close() }
            try await raw.upgradeToWebSocket()
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
}
