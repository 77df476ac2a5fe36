import KindlingCore
import KindlingTesting
import NIOEmbedded
import Testing

@testable import KindlingServer

/// The realtime session on an embedded channel: the wire protocol (v5) in WebSocket frames, with
/// the namespace behind it but no socket.
@Suite(.timeLimit(.minutes(1)))
struct WebSocketSessionHandlerTests {
    /// The texts the session writes up to and including its response to request `number`.
    static func untilResponse(_ number: Int, on session: EmbeddedWebSocketSession) async throws -> [String] {
        var texts: [String] = []
        while true {
            let text = try await session.nextText()
            texts.append(text)
            if try JSONParser.parse(text)["d"]?["r"]?.numberValue == Double(number) { return texts }
        }
    }

    @Test func theHandshakeIsTheFirstFrame() async throws {
        try await EmbeddedServer.with { server in
            let session = try await EmbeddedWebSocketSession.open(server, handshakeHost: "db.example.test:443")
            let handshake = try JSONParser.parse(try await session.nextText())
            #expect(handshake["t"] == .string("c"))
            #expect(handshake["d"]?["t"] == .string("h"))
            let hello = handshake["d"]?["d"]
            #expect(hello?["v"] == .string("5"))
            #expect(hello?["h"] == .string("db.example.test:443"))
            #expect(hello?["s"]?.stringValue?.isEmpty == false)
            #expect((hello?["ts"]?.numberValue ?? 0) > 1_700_000_000_000)
            try await session.finish()
        }
    }

    @Test func aPutIsAcknowledgedAndAGetReadsItBack() async throws {
        try await EmbeddedServer.with { server in
            let session = try await EmbeddedWebSocketSession.open(server)
            _ = try await session.nextText()
            try await session.request(1, "p", #"{"p":"/a","d":1}"#)
            #expect(try await session.nextText() == #"{"t":"d","d":{"r":1,"b":{"s":"ok","d":{}}}}"#)
            try await session.request(2, "g", #"{"p":"/a","q":{}}"#)
            #expect(try await session.nextText() == #"{"t":"d","d":{"r":2,"b":{"s":"ok","d":1}}}"#)
            try await session.finish()
        }
    }

    /// A listen gets the location's data before its `ok`; a later write there reaches it before
    /// the writer's `ok` (here the same connection).
    @Test func aListenGetsTheDataThenOkThenLaterChanges() async throws {
        try await EmbeddedServer.with { server in
            let session = try await EmbeddedWebSocketSession.open(server)
            _ = try await session.nextText()
            try await session.request(1, "p", #"{"p":"/rooms/a","d":{"n":1}}"#)
            _ = try await Self.untilResponse(1, on: session)
            try await session.request(2, "q", #"{"p":"/rooms","h":""}"#)
            #expect(
                try await Self.untilResponse(2, on: session) == [
                    #"{"t":"d","d":{"a":"d","b":{"p":"rooms","d":{"a":{"n":1}}}}}"#, #"{"t":"d","d":{"r":2,"b":{"s":"ok","d":{}}}}"#,
                ])
            try await session.request(3, "p", #"{"p":"/rooms/a/n","d":2}"#)
            #expect(
                try await Self.untilResponse(3, on: session) == [
                    #"{"t":"d","d":{"a":"d","b":{"p":"rooms/a/n","d":2}}}"#, #"{"t":"d","d":{"r":3,"b":{"s":"ok","d":{}}}}"#,
                ])
            try await session.finish()
        }
    }

    /// The protocol's keep-alive ping gets its pong; WebSocket pings get one pong per read,
    /// carrying the latest ping's payload.
    @Test func pingsAreAnswered() async throws {
        try await EmbeddedServer.with { server in
            let session = try await EmbeddedWebSocketSession.open(server)
            _ = try await session.nextText()
            try await session.send(#"{"t":"c","d":{"t":"p","d":{}}}"#)
            #expect(try await session.nextText() == #"{"t":"c","d":{"t":"o","d":{}}}"#)
            let pings = ["1", "2", "3"].flatMap { RawConnection.frame(opcode: 9, Array($0.utf8)) }
            try await session.send(bytes: pings)
            #expect(try await session.nextFrame() == .init(fin: true, opcode: 0xA, payload: Array("3".utf8)))
            // The next frame is the answer to what is sent next: no pong for the other two pings.
            try await session.send(#"{"t":"c","d":{"t":"p","d":{}}}"#)
            #expect(try await session.nextText() == #"{"t":"c","d":{"t":"o","d":{}}}"#)
            try await session.finish()
        }
    }

    /// A request the server cannot serve is refused by number and the connection goes on.
    @Test func anUnknownActionIsRefusedAndTheConnectionGoesOn() async throws {
        try await EmbeddedServer.with { server in
            let session = try await EmbeddedWebSocketSession.open(server)
            _ = try await session.nextText()
            try await session.request(1, "zz", "{}")
            let refusal = try JSONParser.parse(try await session.nextText())
            #expect(refusal["d"]?["r"] == .number(1))
            #expect(refusal["d"]?["b"]?["s"] == .string("unknown_action"))
            #expect(refusal["d"]?["b"]?["d"]?.stringValue?.contains("zz") == true)
            try await session.request(2, "p", #"{"p":"/after","d":true}"#)
            #expect(try await session.nextText() == #"{"t":"d","d":{"r":2,"b":{"s":"ok","d":{}}}}"#)
            #expect(session.channel.isActive)
            try await session.finish()
        }
    }

    /// Text that is not JSON names no request to refuse: the connection is closed with 1003
    /// (unacceptable data), and one not UTF-8 with 1007.
    @Test(arguments: [(Array("{this is not json".utf8), 1003), ([0x7B, 0xFF, 0xFE, 0x7D], 1007)] as [([UInt8], Int)])
    func anUnreadableMessageClosesTheConnection(payload: [UInt8], code: Int) async throws {
        try await EmbeddedServer.with { server in
            let session = try await EmbeddedWebSocketSession.open(server)
            _ = try await session.nextText()
            try await session.send(bytes: RawConnection.frame(opcode: 1, payload))
            let close = try await session.nextFrame()
            #expect(close.opcode == 0x8)
            #expect(close.closeCode == code)
            try await session.closed()
        }
    }

    /// A client's close frame is echoed with its code (1000 when it gave none), or answered 1002
    /// when it carries a code no endpoint may send; then the connection closes.
    @Test(arguments: [(nil, 1000), (4001, 4001), (1005, 1002)] as [(Int?, Int)])
    func aCloseFrameIsAnswered(sent: Int?, answered: Int) async throws {
        try await EmbeddedServer.with { server in
            let session = try await EmbeddedWebSocketSession.open(server)
            _ = try await session.nextText()
            let payload = sent.map { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } ?? []
            try await session.send(bytes: RawConnection.frame(opcode: 8, payload))
            let close = try await session.nextFrame()
            #expect(close.opcode == 0x8)
            #expect(close.closeCode == answered)
            try await session.closed()
        }
    }

    /// A message fragmented into WebSocket frames is reassembled; a continuation frame with no
    /// message under way is a protocol error (1002).
    @Test func fragmentsAreReassembledAndAStrayContinuationCloses() async throws {
        try await EmbeddedServer.with { server in
            let session = try await EmbeddedWebSocketSession.open(server)
            _ = try await session.nextText()
            let message = Array(#"{"t":"d","d":{"r":7,"a":"p","b":{"p":"/frag","d":"in two pieces"}}}"#.utf8)
            try await session.send(
                bytes: RawConnection.frame(opcode: 1, Array(message[..<20]), fin: false) + RawConnection.frame(opcode: 0, Array(message[20...])))
            #expect(try await session.nextText() == #"{"t":"d","d":{"r":7,"b":{"s":"ok","d":{}}}}"#)
            try await session.send(bytes: RawConnection.frame(opcode: 0, Array("stray".utf8)))
            #expect(try await session.nextFrame().closeCode == 1002)
            try await session.closed()
        }
    }

    /// The end of the channel detaches the session: its onDisconnect writes run, and another
    /// connection's listen sees them.
    @Test func aClosedChannelRunsItsOnDisconnectWrites() async throws {
        try await EmbeddedServer.with { server in
            let watcher = try await EmbeddedWebSocketSession.open(server)
            _ = try await watcher.nextText()
            let leaver = try await EmbeddedWebSocketSession.open(server)
            _ = try await leaver.nextText()
            try await leaver.request(1, "p", #"{"p":"/presence/ada","d":true}"#)
            _ = try await Self.untilResponse(1, on: leaver)
            try await leaver.request(2, "o", #"{"p":"/presence/ada","d":null}"#)
            #expect(try await leaver.nextText() == #"{"t":"d","d":{"r":2,"b":{"s":"ok","d":{}}}}"#)
            try await watcher.request(1, "q", #"{"p":"/presence","h":""}"#)
            #expect(try await Self.untilResponse(1, on: watcher).first == #"{"t":"d","d":{"a":"d","b":{"p":"presence","d":{"ada":true}}}}"#)
            try await leaver.finish()
            #expect(try await watcher.nextText() == #"{"t":"d","d":{"a":"d","b":{"p":"presence/ada","d":null}}}"#)
            try await watcher.finish()
        }
    }
}
