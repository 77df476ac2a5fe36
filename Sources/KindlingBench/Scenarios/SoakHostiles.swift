import NIOCore
import Synchronization

/// The soak's hostile clients, each a loop that runs until the deadline and reconnects whenever
/// the server cuts it off (which is what a hardened server should do). They count what they did.
struct SoakHostiles: Sendable {
    let target: BenchTarget
    let group: any EventLoopGroup
    let namespace: String
    let deadline: ContinuousClock.Instant
    let tally = Tally()

    /// What the hostile clients did, across all of them.
    final class Tally: Sendable {
        let connections = Atomic<Int>(0)
        let cutOff = Atomic<Int>(0)
        let bytesSent = Atomic<Int>(0)
        let refusedConnects = Atomic<Int>(0)
    }

    private var running: Bool { ContinuousClock.now < deadline && !Task.isCancelled }

    /// Opens a connection, counting it; nil (after a pause) when the server would not take it.
    private func open(reading: Bool) async -> SoakSocket? {
        do {
            let socket = try await SoakSocket.connect(to: target, group: group, reading: reading)
            tally.connections.add(1, ordering: .relaxed)
            return socket
        } catch {
            tally.refusedConnects.add(1, ordering: .relaxed)
            try? await Task.sleep(for: .milliseconds(200))
            return nil
        }
    }

    private func send(_ socket: SoakSocket, _ bytes: [UInt8]) async -> Bool {
        do {
            try await socket.send(bytes)
            tally.bytesSent.add(bytes.count, ordering: .relaxed)
            return true
        } catch {
            tally.cutOff.add(1, ordering: .relaxed)
            socket.close()
            return false
        }
    }

    /// Upgrades to a WebSocket and sends pings without ever reading a pong.
    func pingFlood() async {
        let ping = Self.maskedFrame(opcode: 0x9, payload: [UInt8](repeating: 0x70, count: 120))
        let batch = Array([[UInt8]](repeating: ping, count: 500).joined())
        while running {
            guard let socket = await open(reading: false) else { continue }
            guard await send(socket, Array(Self.upgrade(namespace: namespace).utf8)) else { continue }
            while running, await send(socket, batch) {
                try? await Task.sleep(for: .milliseconds(5))
            }
            socket.close()
        }
    }

    /// Pipelines GETs of a large value and never reads the answers; starts over every 30 s.
    func nonReader(path: String) async {
        let requests = Array(String(repeating: "GET \(path).json?ns=\(namespace) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", count: 1000).utf8)
        while running {
            guard let socket = await open(reading: false) else { continue }
            if await send(socket, requests) { await pause(.seconds(30), unlessClosed: socket) }
            socket.close()
        }
    }

    /// Sends request headers one byte a second.
    func slowloris() async {
        let start = Array("GET /slow.json?ns=\(namespace) HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8)
        while running {
            guard let socket = await open(reading: true) else { continue }
            guard await send(socket, start) else { continue }
            while running, !socket.isClosed, await send(socket, [UInt8(ascii: "X")]) {
                try? await Task.sleep(for: .seconds(1))
            }
            if socket.isClosed { tally.cutOff.add(1, ordering: .relaxed) }
            socket.close()
        }
    }

    /// Reads from a fresh namespace name, `perSecond` times a second, on one kept-alive
    /// connection.
    func namespaceFlood(perSecond: Int) async {
        var index = 0
        while running {
            guard let socket = await open(reading: true) else { continue }
            while running, !socket.isClosed {
                index += 1
                let request = "GET /x.json?ns=flood\(index)x\(UInt32.random(in: 0...UInt32.max)) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                guard await send(socket, Array(request.utf8)) else { break }
                try? await Task.sleep(for: .milliseconds(1000 / max(1, perSecond)))
            }
            socket.close()
        }
    }

    /// Sends the head and 4 MB of a 64 MB PUT, then nothing, until the server gives up on it.
    func partialBody() async {
        let head = Array("PUT /partial.json?ns=\(namespace) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 67108864\r\n\r\n\"".utf8)
        let chunk = [UInt8](repeating: UInt8(ascii: "p"), count: 4 * 1024 * 1024)
        while running {
            guard let socket = await open(reading: true) else { continue }
            if await send(socket, head + chunk) {
                await pause(.seconds(600), unlessClosed: socket)
                if socket.isClosed { tally.cutOff.add(1, ordering: .relaxed) }
            }
            socket.close()
        }
    }

    private func pause(_ length: Duration, unlessClosed socket: SoakSocket) async {
        let until = min(deadline, ContinuousClock.now + length)
        while ContinuousClock.now < until, !socket.isClosed, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    static func upgrade(namespace: String) -> String {
        "GET /.ws?v=5&ns=\(namespace) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    }

    /// A masked client frame (RFC 6455 §5.2) with a payload under 126 bytes.
    static func maskedFrame(opcode: UInt8, payload: [UInt8]) -> [UInt8] {
        let key: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        return [0x80 | opcode, 0x80 | UInt8(min(125, payload.count))] + key
            + payload.prefix(125).enumerated().map { $0.element ^ key[$0.offset % 4] }
    }
}
