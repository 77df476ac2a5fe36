import KindlingCore
import NIOCore
import NIOWebSocket
import Testing

@testable import KindlingServer

struct FrameUnmaskingTests {
    /// Word-at-a-time unmasking on the stack gives SwiftNIO's bytes for every length around the
    /// word size and the stack limit, and every key.
    @Test func unmasksAsSwiftNIODoes() {
        var random = SeededGenerator(seed: 16)
        let lengths = Array(0...33) + [FrameUnmasking.stackLimit - 1, FrameUnmasking.stackLimit, FrameUnmasking.stackLimit + 1, 5_000]
        for length in lengths {
            for _ in 0..<4 {
                let key = WebSocketMaskingKey.random(using: &random)
                let plain = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
                var masked = ByteBuffer(bytes: plain)
                masked.webSocketMask(key)
                let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: key, data: masked)
                #expect(Array(frame.unmaskedData.readableBytesView) == plain)
                let unmasked = FrameUnmasking.withUnmaskedPayload(frame) { Array($0) }
                #expect(unmasked == plain, "length \(length)")
            }
        }
    }

    /// A frame the client did not mask (refused earlier in the pipeline) is read as it is.
    @Test func unmaskedFrameIsReadAsItIs() {
        let frame = WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: "{}"))
        #expect(FrameUnmasking.withUnmaskedPayload(frame) { Array($0) } == Array("{}".utf8))
    }
}
