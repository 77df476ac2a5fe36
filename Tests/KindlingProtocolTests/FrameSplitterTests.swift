import KindlingProtocol
import Testing

/// The client's cut: pieces of 16,384 UTF-16 units as the official SDKs send (protocol §2.2).
struct FrameSplitterTests {
    private func texts(_ frames: [ArraySlice<UInt8>]) -> [String] {
        frames.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func utf16PiecesHoldAsManyUnitsAsFitAndNeverHalveASurrogatePair() throws {
        // 16,383 units, then a pair that would straddle the limit: it opens the second piece.
        let message = String(repeating: "é", count: 16_383) + "😀" + "abc"
        let frames = texts(FrameSplitter.frames(Array(message.utf8), measuring: .utf16Units))
        #expect(frames.count == 3)
        #expect(frames[0] == "2")
        #expect(frames[1] == String(repeating: "é", count: 16_383))
        #expect(frames[2] == "😀abc")
        // The same bytes cut by size take more pieces: two bytes per "é".
        #expect(FrameSplitter.frames(Array(message.utf8)).count == 4)
    }

    @Test func aMessageOfExactlyTheLimitInUnitsIsOneFrameWhateverItsBytes() {
        let message = String(repeating: "✓", count: FrameSplitter.pieceLimit)
        let frames = FrameSplitter.frames(Array(message.utf8), measuring: .utf16Units)
        #expect(texts(frames) == [message])
        let longer = texts(FrameSplitter.frames(Array((message + "a").utf8), measuring: .utf16Units))
        #expect(longer == ["2", message, "a"])
    }

    @Test func utf16PiecesRebuildTheMessageAndStayWithinTheLimit() {
        let message = String(repeating: "é✓😀a", count: 9000)
        let frames = FrameSplitter.frames(Array(message.utf8), measuring: .utf16Units)
        let pieces = texts(frames.dropFirst().map { $0 })
        #expect(Int(texts([frames[0]])[0]) == pieces.count)
        #expect(pieces.count == (message.utf16.count + FrameSplitter.pieceLimit - 1) / FrameSplitter.pieceLimit)
        #expect(pieces.allSatisfy { $0.utf16.count <= FrameSplitter.pieceLimit })
        #expect(pieces.joined() == message)
    }

    /// Bytes no Swift string holds: continuation bytes with no lead byte, runs longer than any
    /// character, and lead bytes that promise more than follows.
    static let invalidUTF8: [[UInt8]] = [
        [UInt8](repeating: 0x80, count: 40_000),
        [0x61] + [UInt8](repeating: 0xBF, count: 16_390) + [0x61],
        [UInt8](repeating: 0x61, count: 16_383) + [0xF0] + [UInt8](repeating: 0x80, count: 20_000),
        [UInt8](repeating: 0xFF, count: 33_000),
        Array((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }),
    ]

    @Test(.timeLimit(.minutes(1)), arguments: invalidUTF8, [FrameSplitter.Measure.utf8Bytes, .utf16Units])
    func invalidUTF8IsCutIntoBoundedPiecesThatRebuildIt(message: [UInt8], measure: FrameSplitter.Measure) throws {
        let frames = FrameSplitter.frames(message, measuring: measure)
        let pieces = frames.dropFirst()
        #expect(Int(String(decoding: try #require(frames.first), as: UTF8.self)) == pieces.count)
        #expect(pieces.allSatisfy { !$0.isEmpty && $0.count <= 4 * FrameSplitter.pieceLimit })
        if measure == .utf8Bytes { #expect(pieces.allSatisfy { $0.count <= FrameSplitter.pieceLimit }) }
        #expect(Array(pieces.joined()) == message)
    }
}
