import KindlingBench
import NIOCore
import NIOEmbedded
import Testing

/// The floor server is a yardstick: these check that it does what the lean probe counts (a
/// handshake, one `ok` per request with its number, a put's payload at every listener), so its
/// figures measure a server that answers, not one that drops work.
@Suite struct FloorHandlerTests {
    /// RFC 6455 §1.3's sample key and the accept it must get.
    static let handshake =
        "GET /.ws?v=5 HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"

    /// A masked client text frame holding `body`.
    static func frame(_ body: String) -> [UInt8] {
        let payload = Array(body.utf8)
        let mask: [UInt8] = [0x12, 0x9a, 0x4c, 0xe1]
        var bytes: [UInt8] = [0x81]
        if payload.count < 126 {
            bytes.append(0x80 | UInt8(payload.count))
        } else {
            bytes += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xff)]
        }
        bytes += mask
        bytes += payload.enumerated().map { $0.element ^ mask[$0.offset & 3] }
        return bytes
    }

    /// The payloads of the unmasked server frames in `buffer`.
    static func messages(_ buffer: ByteBuffer) -> [String] {
        var buffer = buffer
        var messages: [String] = []
        while let first = buffer.readInteger(as: UInt16.self) {
            var length = Int(first & 0x7f)
            if length == 126, let long = buffer.readInteger(as: UInt16.self) { length = Int(long) }
            messages.append(buffer.readString(length: length) ?? "<short>")
        }
        return messages
    }

    static func connected(_ hub: FloorHub, loop: EmbeddedEventLoop) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(handler: FloorHandler(hub: hub), loop: loop)
        try channel.writeInbound(ByteBuffer(string: handshake))
        var reply = try #require(try channel.readOutbound(as: ByteBuffer.self))
        let end = try #require(reply.readableBytesView.firstRange(of: Array("\r\n\r\n".utf8)))
        let read = reply.readString(length: end.upperBound - reply.readerIndex)
        let head = try #require(read)
        #expect(head.hasPrefix("HTTP/1.1 101 "))
        #expect(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"))
        #expect(messages(reply).count == 1)
        return channel
    }

    @Test func answersEachRequestWithItsNumberInOneWritePerRead() throws {
        let loop = EmbeddedEventLoop()
        let channel = try Self.connected(FloorHub(), loop: loop)
        let puts =
            Self.frame(#"{"t":"d","d":{"r":7,"a":"p","b":{"p":"/a","d":1}}}"#)
            + Self.frame(#"{"t":"d","d":{"r":123,"a":"p","b":{"p":"/b","d":"\#(String(repeating: "x", count: 200))"}}}"#)
        // The second frame arrives in two reads: it is answered once whole.
        try channel.writeInbound(ByteBuffer(bytes: puts.dropLast(5)))
        let first = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(Self.messages(first) == [#"{"t":"d","d":{"r":7,"b":{"s":"ok","d":""}}}"#])
        try channel.writeInbound(ByteBuffer(bytes: puts.suffix(5)))
        let second = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(Self.messages(second) == [#"{"t":"d","d":{"r":123,"b":{"s":"ok","d":""}}}"#])
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
    }

    /// A client may send its first request right behind the handshake, in the same read.
    @Test func aRequestInTheHandshakesReadIsAnswered() throws {
        let channel = EmbeddedChannel(handler: FloorHandler(hub: FloorHub()), loop: EmbeddedEventLoop())
        try channel.writeInbound(ByteBuffer(bytes: Array(Self.handshake.utf8) + Self.frame(#"{"t":"d","d":{"r":42,"a":"g","b":{"p":"/"}}}"#)))
        _ = try #require(try channel.readOutbound(as: ByteBuffer.self))
        let answer = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(Self.messages(answer) == [#"{"t":"d","d":{"r":42,"b":{"s":"ok","d":""}}}"#])
    }

    @Test func aPutReachesEveryListenerButItsWriterAsAnEvent() throws {
        let loop = EmbeddedEventLoop()
        let hub = FloorHub()
        let listeners = try (0..<2).map { _ in try Self.connected(hub, loop: loop) }
        let writer = try Self.connected(hub, loop: loop)
        for listener in listeners {
            try listener.writeInbound(ByteBuffer(bytes: Self.frame(#"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/f","h":""}}}"#)))
            let answer = try #require(try listener.readOutbound(as: ByteBuffer.self))
            #expect(Self.messages(answer) == [#"{"t":"d","d":{"r":1,"b":{"s":"ok","d":""}}}"#])
        }
        let put = #"{"t":"d","d":{"r":2,"a":"p","b":{"p":"/f","d":{"ts":5}}}}"#
        try writer.writeInbound(ByteBuffer(bytes: Self.frame(put) + Self.frame(put)))
        let answers = try #require(try writer.readOutbound(as: ByteBuffer.self))
        #expect(Self.messages(answers).count == 2)
        loop.run()
        for listener in listeners {
            // Both puts, joined into one write at the end of the loop turn.
            let delivered = try #require(try listener.readOutbound(as: ByteBuffer.self))
            let event = #"{"t":"d","d":{"a":"d","b":{"p":"/f","d":{"ts":5}}}}"#
            #expect(Self.messages(delivered) == [event, event])
            #expect(try listener.readOutbound(as: ByteBuffer.self) == nil)
        }
        #expect(try writer.readOutbound(as: ByteBuffer.self) == nil)
    }
}
