import KindlingBench
import NIOCore
import Testing

@Suite("RESP parsing")
struct RESPParserTests {
    @Test("a pub/sub message, whole and cut in two")
    func message() throws {
        let text = "*3\r\n$7\r\nmessage\r\n$6\r\nfanout\r\n$5\r\nhello\r\n:3\r\n"
        var whole = ByteBuffer(string: text)
        let first = try RESPParser.next(&whole)
        #expect(first == .array([.bulk(ByteBuffer(string: "message")), .bulk(ByteBuffer(string: "fanout")), .bulk(ByteBuffer(string: "hello"))]))
        #expect(try RESPParser.next(&whole) == .integer(3))
        #expect(try RESPParser.next(&whole) == nil)

        var partial = ByteBuffer(bytes: Array(text.utf8.prefix(20)))
        #expect(try RESPParser.next(&partial) == nil)
        #expect(partial.readableBytes == 20)
    }

    @Test("simple strings, errors and null bulk strings")
    func scalars() throws {
        var buffer = ByteBuffer(string: "+OK\r\n-ERR wrong\r\n$-1\r\n")
        #expect(try RESPParser.next(&buffer) == .simple("OK"))
        #expect(try RESPParser.next(&buffer) == .error("ERR wrong"))
        #expect(try RESPParser.next(&buffer) == .bulk(nil))
    }

    @Test("commands are arrays of bulk strings")
    func command() {
        var buffer = ByteBuffer()
        RESPParser.command([Array("SET".utf8), Array("k".utf8), Array("10".utf8)], into: &buffer)
        #expect(String(buffer: buffer) == "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\n10\r\n")
    }

    @Test("lengths and integers a server could not mean are refused, not trusted")
    func hostile() throws {
        for text in [":12x\r\n", "$9223372036854775808\r\n", ":-9223372036854775809\r\n", "*-\r\n", ":\r\n", ":+\r\n", ":+-1\r\n", "?\r\n"] {
            var buffer = ByteBuffer(string: text)
            #expect(throws: BenchError.self, "\(text)") { try RESPParser.next(&buffer) }
        }
        // An array announcing more elements than its bytes hold waits for the rest (room for
        // all of them would be more memory than there is).
        var cut = ByteBuffer(string: "*100000000000000000\r\n:1\r\n")
        #expect(try RESPParser.next(&cut) == nil)
        #expect(cut.readableBytes == 25)
        var integers = ByteBuffer(string: ":-42\r\n:+7\r\n:9223372036854775807\r\n:-9223372036854775808\r\n")
        #expect(try RESPParser.next(&integers) == .integer(-42))
        #expect(try RESPParser.next(&integers) == .integer(7))
        #expect(try RESPParser.next(&integers) == .integer(Int.max))
        #expect(try RESPParser.next(&integers) == .integer(Int.min))
    }

    @Test("values cut at every byte wait for the rest and then read whole")
    func cutEverywhere() throws {
        let text = "*3\r\n$7\r\nmessage\r\n$6\r\nfanout\r\n$5\r\nhello\r\n$-1\r\n+OK\r\n"
        let expected: [RESPValue] = [
            .array([.bulk(ByteBuffer(string: "message")), .bulk(ByteBuffer(string: "fanout")), .bulk(ByteBuffer(string: "hello"))]),
            .bulk(nil), .simple("OK"),
        ]
        let bytes = Array(text.utf8)
        for split in 1..<bytes.count {
            var buffer = ByteBuffer(bytes: bytes[..<split])
            var found: [RESPValue] = []
            while let value = try RESPParser.next(&buffer) { found.append(value) }
            buffer.writeBytes(bytes[split...])
            while let value = try RESPParser.next(&buffer) { found.append(value) }
            #expect(found == expected, "split at \(split)")
            #expect(buffer.readableBytes == 0)
        }
    }
}
