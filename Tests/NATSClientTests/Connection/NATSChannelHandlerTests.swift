import NIOCore
import NIOEmbedded
import Testing

@testable import NATSClient

@Suite struct NATSChannelHandlerTests {
    @Test func answersPingAndHandsOnMessagesInOrder() async throws {
        let (stream, events) = AsyncStream.makeStream(of: Result<NATSServerOp, NATSProtocolError>.self)
        let channel = EmbeddedChannel(handler: NATSChannelHandler(events: events))
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 4222)).get()
        try channel.writeInbound(ByteBuffer(string: "PING\r\nMSG a 1 3\r\nab"))
        try channel.writeInbound(ByteBuffer(string: "c\r\nPONG\r\n"))
        let pong = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(String(buffer: pong) == "PONG\r\n")
        #expect(channel.isActive)
        _ = try channel.finish()
        var kinds: [String] = []
        for await event in stream {
            switch event {
            case .success(.msg(let inbound)):
                kinds.append("msg \(inbound.message.subject) \(String(decoding: inbound.message.payload, as: UTF8.self))")
            case .success(.pong): kinds.append("pong")
            default: kinds.append("other")
            }
        }
        #expect(kinds == ["msg a abc", "pong"])
    }

    @Test func closesTheChannelOnMalformedInput() async throws {
        let (stream, events) = AsyncStream.makeStream(of: Result<NATSServerOp, NATSProtocolError>.self)
        let channel = EmbeddedChannel(handler: NATSChannelHandler(events: events))
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 4222)).get()
        #expect(channel.isActive)
        try channel.writeInbound(ByteBuffer(string: "MSG a 1 nope\r\n"))
        #expect(!channel.isActive)
        var received: [Result<NATSServerOp, NATSProtocolError>] = []
        for await event in stream { received.append(event) }
        guard case .failure(let error) = received.last else {
            Issue.record("no failure handed on")
            return
        }
        #expect(error == .sizeOutOfRange())
    }

    @Test func parsesServerAddresses() throws {
        #expect(try NATSServerAddress(parsing: "nats://127.0.0.1:4333") == NATSServerAddress(host: "127.0.0.1", port: 4333))
        #expect(try NATSServerAddress(parsing: "nats://user:pw@example.com") == NATSServerAddress(host: "example.com", port: 4222))
        #expect(try NATSServerAddress(parsing: "[::1]:5000") == NATSServerAddress(host: "::1", port: 5000))
        #expect(throws: NATSError.invalidURL()) { try NATSServerAddress(parsing: "http://x:1") }
        #expect(throws: NATSError.invalidURL()) { try NATSServerAddress(parsing: "x:99999") }
        #expect(throws: NATSError.invalidURL()) { try NATSServerAddress(parsing: "x:") }
    }
}
