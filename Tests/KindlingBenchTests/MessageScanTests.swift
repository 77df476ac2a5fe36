import KindlingBench
import KindlingProtocol
import NIOCore
import Testing

@Suite("reading server messages without a parse")
struct MessageScanTests {
    @Test("a response's number and status")
    func response() {
        let ok = MessageScan.response(ByteBuffer(string: #"{"t":"d","d":{"r":42,"b":{"s":"ok","d":{}}}}"#))
        #expect(ok?.number == 42)
        #expect(ok?.ok == true)
        let stale = ByteBuffer(string: #"{"t":"d","d":{"r":7,"b":{"s":"datastale","d":"changed"}}}"#)
        #expect(MessageScan.response(stale)?.ok == false)
        #expect(MessageScan.response(ByteBuffer(string: #"{"t":"d","d":{"a":"d","b":{"p":"x","d":1}}}"#)) == nil)
    }

    @Test("a push's path and a numeric value")
    func push() throws {
        let message = ByteBuffer(string: #"{"t":"d","d":{"a":"d","b":{"p":"seats/l3/free","d":-5}}}"#)
        let push = try #require(MessageScan.push(message))
        #expect(push.path == "seats/l3/free")
        #expect(!push.merge)
        #expect(MessageScan.integer(in: message, range: push.data) == -5)
        let timed = ByteBuffer(string: #"{"t":"d","d":{"a":"d","b":{"p":"f","d":{"ts":123456789,"seq":2}}}}"#)
        #expect(MessageScan.integer(after: Array(#""ts":"#.utf8), in: timed) == 123_456_789)
        // A number no Int holds is not read (it wrapped around before).
        let huge = ByteBuffer(string: #"{"t":"d","d":{"a":"d","b":{"p":"f","d":{"ts":99999999999999999999}}}}"#)
        #expect(MessageScan.integer(after: Array(#""ts":"#.utf8), in: huge) == nil)
        let extremes = ByteBuffer(string: #"{"lo":-9223372036854775808,"hi":9223372036854775807}"#)
        #expect(MessageScan.integer(after: Array(#""lo":"#.utf8), in: extremes) == Int.min)
        #expect(MessageScan.integer(after: Array(#""hi":"#.utf8), in: extremes) == Int.max)
    }

    @Test("decimal writing round-trips")
    func decimals() {
        for value in [0, 7, 10, 1_234_567, -89, Int.max, Int.min] {
            var bytes: [UInt8] = []
            WireLiterals.appendDecimal(value, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == String(value))
        }
    }
}
