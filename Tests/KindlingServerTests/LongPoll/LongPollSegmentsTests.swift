import Testing

@testable import KindlingServer

/// The client's messages come back whole and in order however its requests' segments arrive,
/// and what no SDK sends is refused before it can hold memory.
struct LongPollSegmentsTests {
    /// `text` as the SDK sends it: web-safe base64 with `.` padding, cut every `size` characters.
    static func segments(_ text: String, from first: Int, size: Int = LongPollSegments.segmentCharacters) -> [LongPollSegments.Segment] {
        let encoded = Array(Self.encode(Array(text.utf8)).utf8)
        let pieces = stride(from: 0, to: encoded.count, by: size).map { Array(encoded[$0..<min($0 + size, encoded.count)]) }
        return pieces.enumerated().map { LongPollSegments.Segment(number: first + $0.offset, total: pieces.count, data: $0.element) }
    }

    static func encode(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var text = ""
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
            for digit in 0..<4 { text.append(digit <= chunk.count ? alphabet[(value >> (18 - 6 * digit)) & 63] : ".") }
            index += 3
        }
        return text
    }

    @Test func messagesComeOutInOrderWhateverOrderTheirSegmentsArrive() throws {
        var reassembly = LongPollSegments(maxMessageBytes: 1 << 20)
        let long = String(repeating: "é", count: 3_000)
        let first = Self.segments(#"{"a":"\#(long)"}"#, from: 0)
        #expect(first.count > 2)
        let second = Self.segments(#"{"b":1}"#, from: first.count)
        // The second message and the end of the first arrive before the first segment.
        #expect(try reassembly.add(second + Array(first.dropFirst())) == [])
        #expect(reassembly.heldBytes > 0)
        let messages = try reassembly.add([first[0], first[1]])  // one of them again
        #expect(messages.map { String(decoding: $0, as: UTF8.self) } == [#"{"a":"\#(long)"}"#, #"{"b":1}"#])
        #expect(reassembly.heldBytes == 0)
        // A segment already taken (a request the browser sent twice) changes nothing.
        #expect(try reassembly.add([second[0]]) == [])
    }

    @Test func whatNoSDKSendsIsRefused() throws {
        var reassembly = LongPollSegments(maxMessageBytes: 4_000)
        #expect(throws: LongPollSegments.Refusal.self) { try reassembly.add([.init(number: reassembly.window, total: 1, data: [])]) }
        #expect(throws: LongPollSegments.Refusal.self) { try reassembly.add([.init(number: 0, total: 0, data: [])]) }
        #expect(throws: LongPollSegments.Refusal.self) { try reassembly.add([.init(number: 0, total: reassembly.window + 1, data: [])]) }
        #expect(throws: LongPollSegments.Refusal.self) {
            try reassembly.add(Self.segments("not base64 ~", from: 0).map { .init(number: $0.number, total: 1, data: Array("@@@@".utf8)) })
        }
        var mismatched = LongPollSegments(maxMessageBytes: 4_000)
        #expect(throws: LongPollSegments.Refusal.self) {
            try mismatched.add([.init(number: 0, total: 2, data: Array("eyJh".utf8)), .init(number: 1, total: 3, data: Array("Ijox".utf8))])
        }
        var twice = LongPollSegments(maxMessageBytes: 4_000)
        #expect(throws: LongPollSegments.Refusal.self) {
            try twice.add([.init(number: 1, total: 2, data: Array("eyJh".utf8)), .init(number: 1, total: 2, data: Array("Ijox".utf8))])
        }
        // Segments that could never be used are not held past the limit.
        var flood = LongPollSegments(maxMessageBytes: 4_000)
        let piece = [UInt8](repeating: UInt8(ascii: "A"), count: LongPollSegments.segmentCharacters)
        #expect(throws: LongPollSegments.Refusal.tooLarge(flood.maxHeldBytes)) {
            for number in 1..<flood.window { _ = try flood.add([.init(number: number, total: 1, data: piece)]) }
        }
    }

    @Test func base64TakesBothAlphabetsAndRefusesTheRest() {
        #expect(WebSafeBase64.decode(Array("-_8.".utf8)) == [0xFB, 0xFF])
        #expect(WebSafeBase64.decode(Array("+/8=".utf8)) == [0xFB, 0xFF])
        #expect(WebSafeBase64.decode(Array("aGk".utf8)) == Array("hi".utf8))
        #expect(WebSafeBase64.decode(Array("aGk.".utf8)) == Array("hi".utf8))
        #expect(WebSafeBase64.decode([]) == [])
        #expect(WebSafeBase64.decode(Array("a".utf8)) == nil)
        #expect(WebSafeBase64.decode(Array("aG.k".utf8)) == nil)
        #expect(WebSafeBase64.decode(Array("aGk...".utf8)) == nil)
        #expect(WebSafeBase64.decode(Array("aGk!".utf8)) == nil)
    }
}
