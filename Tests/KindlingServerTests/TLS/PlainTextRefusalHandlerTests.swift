import Logging
import NIOCore
import NIOEmbedded
import Testing

@testable import KindlingServer

/// The first-byte check in front of the TLS handler, on an embedded channel.
struct PlainTextRefusalHandlerTests {
    func channel() throws -> EmbeddedChannel {
        var logger = Logger(label: "kindling-refusal-test")
        logger.logLevel = .critical
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(PlainTextRefusalHandler(logger: logger))
        return channel
    }

    @Test func aHandshakeRecordPassesThroughAndTheHandlerLeaves() throws {
        let channel = try channel()
        _ = try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        try channel.writeInbound(ByteBuffer(bytes: [0x16, 0x03, 0x01, 0x00]))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(bytes: [0x16, 0x03, 0x01, 0x00]))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        #expect(throws: (any Error).self) { try channel.pipeline.syncOperations.handler(type: PlainTextRefusalHandler.self) }
        try channel.writeInbound(ByteBuffer(string: "later bytes go straight on"))
        #expect(try channel.readInbound(as: ByteBuffer.self) == ByteBuffer(string: "later bytes go straight on"))
        _ = try channel.finish()
    }

    @Test func plainHTTPGetsA400AndNothingIsPassedOn() throws {
        let channel = try channel()
        _ = try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        try channel.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
        try channel.writeInbound(ByteBuffer(string: "more"))
        #expect(try channel.readInbound(as: ByteBuffer.self) == nil)
        let answer = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(String(buffer: answer).hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(String(buffer: answer).contains("use https://"))
        _ = try? channel.finish()
    }
}
