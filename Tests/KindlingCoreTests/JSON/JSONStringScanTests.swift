import Testing

@testable import KindlingCore

/// The word-at-a-time scan must stop exactly where a byte-by-byte reading would, for every byte
/// value in every lane of a word and in the tail after the last whole word.
struct JSONStringScanTests {
    private static func stopsHere(_ byte: UInt8) -> Bool { byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 }

    @Test func stopsAtTheFirstQuoteBackslashOrControlByteWhereverItLies() {
        for length in 1...19 {
            for position in 0..<length {
                for byte in UInt8.min...UInt8.max {
                    // Plain bytes around the probe, some of them just above the stop bytes.
                    var bytes = (0..<length).map { UInt8(ascii: "a") &+ UInt8($0 % 3) }
                    if length > 3 { bytes[(position + 1) % length] = 0x20 }
                    bytes[position] = byte
                    let expected = bytes.firstIndex(where: Self.stopsHere) ?? bytes.count
                    let expectedHigh = bytes[..<expected].reduce(0, |) >= 0x80
                    let run = bytes.withUnsafeBufferPointer { JSONStringScan.plainRun($0, from: 0) }
                    #expect(run.end == expected, "length \(length), byte \(byte) at \(position)")
                    #expect(run.isASCII == !expectedHigh, "length \(length), byte \(byte) at \(position)")
                }
            }
        }
    }

    @Test func startsWhereItIsToldAndFindsNothingInAPlainRun() {
        let bytes = Array(#"ab"cdefghijklmnopqrstuvwxyz"#.utf8)
        #expect(bytes.withUnsafeBufferPointer { JSONStringScan.plainRun($0, from: 0) }.end == 2)
        let rest = bytes.withUnsafeBufferPointer { JSONStringScan.plainRun($0, from: 3) }
        #expect(rest.end == bytes.count && rest.isASCII)
        #expect([UInt8]().withUnsafeBufferPointer { JSONStringScan.plainRun($0, from: 0) }.end == 0)
    }

    /// Strings with escapes and multi-byte characters at every offset, long enough to span
    /// several words, are written and read back unchanged.
    @Test func writerAndParserRoundTripEscapesAtEveryOffset() throws {
        let specials: [String] = ["\"", "\\", "\n", "\u{0}", "\u{1F}", "é", "😀", "\u{7F}", " "]
        for length in 0...20 {
            for offset in 0...length {
                for special in specials {
                    var text = String(repeating: "x", count: length)
                    text.insert(contentsOf: special, at: text.index(text.startIndex, offsetBy: offset))
                    var writer = JSONWriter()
                    writer.write(text)
                    let parsed = try JSONParser.parse(writer.bytes.withUnsafeBufferPointer { $0 })
                    #expect(parsed == .string(text), "\(writer.text)")
                }
            }
        }
    }

    @Test(arguments: [
        "\"0123456789abcdef\u{1}\"", "\"0123456789abcdef\t\"", "\"0123456789abcdef", "\"0123456789\\x\"",
    ])
    func refusesWhatTheByteByByteReadingRefused(text: String) {
        #expect(throws: ValidationError.self) { try JSONParser.parse(text) }
    }

    @Test func refusesInvalidUTF8AfterALongASCIIRun() {
        let bytes = Array("\"0123456789abcdef".utf8) + [0xC3, 0x28] + Array("\"".utf8)
        #expect(throws: ValidationError.self) { try bytes.withUnsafeBufferPointer { try JSONParser.parse($0) } }
        let escaped = Array("\"0123456789\\n".utf8) + [0xFF] + Array("abcdefgh\"".utf8)
        #expect(throws: ValidationError.self) { try escaped.withUnsafeBufferPointer { try JSONParser.parse($0) } }
    }
}
