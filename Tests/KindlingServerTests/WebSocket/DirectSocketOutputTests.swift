import KindlingCore
import KindlingProtocol
import KindlingTesting
import NIOCore
import NIOEmbedded
import NIOPosix
import Testing

@testable import KindlingServer

/// The plaintext WebSocket's direct socket writes (issue 40): the descriptor is found on a real
/// SwiftNIO channel (and on nothing else), the socket gets exactly the bytes, what a full socket
/// does not take is left for the pipeline, and a reader that fell behind, so that its bytes
/// went partly direct and partly through the pipeline, still gets every event whole and in order.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct DirectSocketOutputTests {
    /// A TCP server on loopback whose first accepted channel `body` gets, with a raw client of it.
    static func withAcceptedChannel(
        receiveBufferBytes: Int? = nil, _ body: (any Channel, RawConnection) async throws -> Void
    ) async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let accepted = group.next().makePromise(of: (any Channel).self)
        let server = try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                accepted.succeed(channel)
                return channel.eventLoop.makeSucceededVoidFuture()
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(server.localAddress?.port)
        let client = try await RawConnection.connect(port: port, receiveBufferBytes: receiveBufferBytes)
        let channel = try await accepted.futureResult.get()
        do {
            try await body(channel, client)
        } catch {
            client.close()
            try? await channel.close()
            try? await server.close()
            throw error
        }
        client.close()
        try? await channel.close()
        try await server.close()
    }

    @Test func anAcceptedChannelsSocketIsFoundAndTakesTheBytesAsTheyAre() async throws {
        try await Self.withAcceptedChannel { channel, client in
            let written = try await channel.eventLoop.submit { () -> DirectSocketOutput.Written? in
                guard let direct = DirectSocketOutput(channel: channel) else { return nil }
                var bytes = ByteBuffer(string: "first ")
                let first = direct.write(&bytes)
                var more = ByteBuffer(string: "second")
                return first == .all && bytes.readableBytes == 0 ? direct.write(&more) : .rest
            }.get()
            #expect(written == .all)
            #expect(await client.waitFor("first second"))
            #expect(client.receivedText == "first second")
        }
    }

    @Test func aChannelWithoutASocketHasNone() async throws {
        let embedded = EmbeddedChannel()
        try await embedded.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 9000)).get()
        #expect(DirectSocketOutput(channel: embedded) == nil)
        _ = try? embedded.finish()
    }

    @Test func aFullSocketTakesWhatItCanAndLeavesTheRest() async throws {
        try await Self.withAcceptedChannel(receiveBufferBytes: 4096) { channel, client in
            client.pauseReading()
            let total = 32 * 1024 * 1024
            let (written, left) = try await channel.eventLoop.submit { () -> (DirectSocketOutput.Written?, Int) in
                guard let direct = DirectSocketOutput(channel: channel) else { return (nil, 0) }
                var bytes = ByteBuffer(repeating: UInt8(ascii: "z"), count: total)
                return (direct.write(&bytes), bytes.readableBytes)
            }.get()
            #expect(written == .rest)
            // The socket took some (its buffers) and not all; the rest is still to be written.
            #expect(left > 0 && left < total)
        }
    }

    /// The listener stops reading while 60 writes of 100 KB (6 MB) are fanned out to it: the
    /// first go straight to the socket until it is full, the rest wait in the pipeline (more
    /// than a megabyte of them, the server's backlog metric shows), and writes after that queue
    /// behind them. Once it reads again, every event is there, whole and in order.
    @Test func aListenerThatFellBehindGetsEveryEventWholeAndInOrder() async throws {
        try await RealtimeProtocolTests.withServer { server in
            let listener = try await RawConnection.connect(port: server.port, receiveBufferBytes: 4096)
            defer { listener.close() }
            try await listener.upgradeToWebSocket(namespace: "t")
            try await listener.send(RawConnection.frame(opcode: 1, Array(#"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/room","h":""}}}"#.utf8)))
            #expect(await listener.waitFor(#""r":1"#))
            listener.pauseReading()
            let writer = try await TestClient.connect(port: server.port, namespace: "t")
            let count = 60
            for write in 1...count {
                try await writer.sendRequest("p", .object([JSONMember("p", .string("/room")), JSONMember("d", .string(Self.value(write)))]))
            }
            // Every write acknowledged: the listener's events are all on their way to it.
            var acknowledged = 0
            while acknowledged < count {
                if try await writer.nextMessage()["d"]?["r"] != nil { acknowledged += 1 }
            }
            // Past what the socket holds, bytes wait in the pipeline: more than the pause mark
            // (1 MB) does, which the server counts as this reader's backlog.
            #expect(try await eventually { try await PrometheusText.backlogBytes(port: server.port) > 0 })
            listener.resumeReading()
            // Counted first (a search of 6 MB every few milliseconds would load the machine),
            // then the last event's last frame, which ends with its number.
            #expect(try await eventually(within: .seconds(30)) { listener.receivedCount >= count * 100_000 })
            #expect(await listener.waitFor(#":\#(count)"}}}"#, timeout: .seconds(30)))
            let values = try Self.messages(in: listener.receivedFrames).compactMap { text -> String? in
                try JSONParser.parse(text)["d"]?["b"]?["d"]?.stringValue
            }
            // Each value's number, or -1 for one that is not whole (so a failure prints numbers).
            #expect(values.map { value in Int(value.prefix { $0 != ":" }).flatMap { value == Self.value($0) ? $0 : nil } ?? -1 } == Array(1...count))
            await writer.close()
        }
    }

    static func value(_ write: Int) -> String { "\(write):" + String(repeating: "v", count: 100_000) + ":\(write)" }

    /// The protocol's messages in the server's text frames, a long message's pieces joined as
    /// a client joins them (`FrameAssembler`: the count of its pieces first, then the pieces).
    static func messages(in frames: [RawConnection.Frame]) throws -> [String] {
        var assembler = FrameAssembler()
        var messages: [String] = []
        for frame in frames where frame.opcode == 0x1 {
            #expect(frame.fin, "the server sends whole WebSocket frames")
            if case .message(let message) = try assembler.receive(String(decoding: frame.payload, as: UTF8.self)) { messages.append(message) }
        }
        return messages
    }
}
