import NIOCore
import Testing

@testable import NATSClient

@Suite struct NATSParserTests {
    private func parseAll(_ text: [UInt8], maxPayload: Int = 1024) throws -> [NATSServerOp] {
        var parser = NATSParser()
        parser.setMaxPayload(maxPayload)
        var buffer = ByteBuffer(bytes: text)
        var ops: [NATSServerOp] = []
        while let op = try parser.next(&buffer) { ops.append(op) }
        return ops
    }

    @Test func parsesMessagesSplitAtEveryByte() throws {
        let wire = Array("PING\r\nMSG a.b 7 _INBOX.x 5\r\nhello\r\nHMSG c 9 22 24\r\nNATS/1.0 503\r\nK: v\r\n\r\nhi\r\n+OK\r\n".utf8)
        for split in 1..<wire.count {
            var parser = NATSParser()
            var buffer = ByteBuffer(bytes: wire[0..<split])
            var ops: [NATSServerOp] = []
            while let op = try parser.next(&buffer) { ops.append(op) }
            buffer.writeBytes(wire[split...])
            while let op = try parser.next(&buffer) { ops.append(op) }
            #expect(ops.count == 4, "split at \(split)")
            guard ops.count == 4, case .msg(let plain) = ops[1], case .msg(let withHeaders) = ops[2] else { continue }
            #expect(plain.sid == 7 && plain.message.reply == "_INBOX.x" && plain.message.payload == Array("hello".utf8))
            #expect(withHeaders.message.status == 503 && withHeaders.message.headers?["K"] == "v" && withHeaders.message.payload == Array("hi".utf8))
        }
    }

    @Test func refusesPayloadOverTheLimit() {
        let size = 1024 + NATSParser.serverHeaderAllowance + 1
        #expect(throws: NATSProtocolError.sizeOutOfRange()) { try parseAll(Array("MSG a 1 \(size)\r\n".utf8)) }
    }

    @Test func refusesMalformedInput() {
        #expect(throws: NATSProtocolError.sizeOutOfRange()) { try parseAll(Array("MSG a 1 -5\r\n".utf8)) }
        #expect(throws: NATSProtocolError.sizeOutOfRange()) { try parseAll(Array("MSG a 1 99999999999999999999\r\n".utf8)) }
        #expect(throws: NATSProtocolError.sizeOutOfRange()) { try parseAll(Array("HMSG a 1 10 5\r\n".utf8)) }
        #expect(throws: NATSProtocolError.malformedArguments()) { try parseAll(Array("MSG a\r\n".utf8)) }
        #expect(throws: NATSProtocolError.unknownOperation()) { try parseAll(Array("BOGUS\r\n".utf8)) }
        #expect(throws: NATSProtocolError.missingPayloadTerminator()) { try parseAll(Array("MSG a 1 2\r\nabcd".utf8)) }
        #expect(throws: NATSProtocolError.malformedHeaders()) { try parseAll(Array("HMSG a 1 4 4\r\nXXXX\r\n".utf8)) }
        #expect(throws: NATSProtocolError.malformedInfo()) { try parseAll(Array("INFO {nope\r\n".utf8)) }
        #expect(throws: NATSProtocolError.controlLineTooLong()) { try parseAll([UInt8](repeating: 65, count: NATSParser.maxControlLine + 2)) }
    }

    @Test func readsInfoAndErrors() throws {
        let ops = try parseAll(
            Array(
                "INFO {\"server_id\":\"X\",\"max_payload\":2048,\"headers\":true,\"connect_urls\":[\"10.0.0.1:4222\"]}\r\n-ERR 'Authorization Violation'\r\n"
                    .utf8))
        guard case .info(let info) = ops.first, case .err(let text) = ops.last else {
            Issue.record("wrong ops \(ops)")
            return
        }
        #expect(info.maxPayload == 2048 && info.connectURLs == ["10.0.0.1:4222"] && info.headers)
        #expect(text == "Authorization Violation")
    }

    @Test func headersRoundTrip() throws {
        var headers = NATSHeaders()
        headers.append("X-Case", "Ünïcode value: with colon")
        headers.append("X-Case", "second")
        headers.append("lower", "")
        let bytes = try headers.encoded()
        #expect(try NATSHeaders.decode(bytes[...]) == headers)
        var bad = NATSHeaders()
        bad.append("X", "a\r\nInjected: 1")
        #expect(throws: NATSError.invalidHeader()) { try bad.encoded() }
    }
}
