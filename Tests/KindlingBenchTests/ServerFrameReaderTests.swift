import NIOCore
import Testing

@testable import KindlingBench

@Suite("Server frames read from the socket's bytes")
struct ServerFrameReaderTests {
    /// An unmasked frame as a server writes it.
    private func frame(_ payload: [UInt8], opcode: UInt8 = ServerFrameReader.text, fin: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            bytes.append(UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            bytes += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes.append(127)
            bytes += (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        return bytes + payload
    }

    private func items(in reads: [[UInt8]], limit: Int = 1 << 20) throws -> [ServerFrameReader.Item] {
        var reader = ServerFrameReader(maxMessageBytes: limit)
        var found: [ServerFrameReader.Item] = []
        for read in reads {
            reader.append(ByteBuffer(bytes: read))
            while let next = try reader.next() { found.append(next) }
        }
        return found
    }

    private func text(_ bytes: [UInt8]) -> ServerFrameReader.Item { .text(ByteBuffer(bytes: bytes)) }

    @Test("short, 16-bit and 64-bit lengths, several frames in one read; binary frames and pongs passed over")
    func lengths() throws {
        let short = Array("hi".utf8), medium = [UInt8](repeating: 7, count: 300), long = [UInt8](repeating: 9, count: 70_000)
        let bytes =
            frame(short) + frame(medium) + frame([1, 2], opcode: ServerFrameReader.binary) + frame(long)
            + frame([], opcode: ServerFrameReader.pong) + frame(Array("p".utf8), opcode: ServerFrameReader.ping)
            + frame([3, 232], opcode: ServerFrameReader.close)
        #expect(try items(in: [bytes]) == [text(short), text(medium), text(long), .ping(ByteBuffer(string: "p")), .close])
    }

    @Test("frames cut at every byte are found once, whole, with each length encoding")
    func cut() throws {
        let long = [UInt8](repeating: 4, count: 65_536)
        let bytes = frame([UInt8](repeating: 1, count: 200)) + frame(long) + frame(Array("ok".utf8), opcode: ServerFrameReader.ping)
        let expected = [text([UInt8](repeating: 1, count: 200)), text(long), .ping(ByteBuffer(string: "ok"))]
        // Every cut within the headers and either side of them, and a sample of cuts elsewhere.
        let cuts = Array(1..<220) + Array(stride(from: 220, to: bytes.count, by: 997)) + Array((bytes.count - 20)..<bytes.count)
        for split in cuts {
            #expect(try items(in: [Array(bytes[..<split]), Array(bytes[split...])]) == expected, "split at \(split)")
        }
        let small = frame(Array("abc".utf8)) + frame(Array("de".utf8), opcode: ServerFrameReader.ping)
        #expect(try items(in: small.map { [$0] }) == [text(Array("abc".utf8)), .ping(ByteBuffer(string: "de"))])
    }

    @Test("a fragmented text message is joined, with a control frame between its fragments")
    func fragments() throws {
        let bytes =
            frame(Array("ab".utf8), fin: false) + frame(Array("x".utf8), opcode: ServerFrameReader.ping)
            + frame(Array("cd".utf8), opcode: ServerFrameReader.continuation, fin: false)
            + frame(Array("ef".utf8), opcode: ServerFrameReader.continuation)
            + frame(Array("g".utf8))
        #expect(try items(in: [bytes]) == [.ping(ByteBuffer(string: "x")), text(Array("abcdef".utf8)), text(Array("g".utf8))])
        // A fragmented binary message is passed over whole.
        let binary =
            frame([1], opcode: ServerFrameReader.binary, fin: false) + frame([2], opcode: ServerFrameReader.continuation)
            + frame(Array("h".utf8))
        #expect(try items(in: [binary]) == [text(Array("h".utf8))])
    }

    @Test("what a server must not send is refused")
    func refused() {
        let masked: [UInt8] = [0x81, 0x82, 1, 2, 3, 4, 0, 0]
        let reserved: [UInt8] = [0x83, 0x00]
        let rsv: [UInt8] = [0xC1, 0x00]
        let longPing = frame([UInt8](repeating: 0, count: 126), opcode: ServerFrameReader.ping)
        let fragmentedClose = frame([], opcode: ServerFrameReader.close, fin: false)
        let huge: [UInt8] = [0x81, 127, 0x80, 0, 0, 0, 0, 0, 0, 0]
        let strayContinuation = frame([1], opcode: ServerFrameReader.continuation)
        let interleaved = frame([1], fin: false) + frame([2])
        for bytes in [masked, reserved, rsv, longPing, fragmentedClose, huge, strayContinuation, interleaved] {
            #expect(throws: BenchError.self) { try items(in: [bytes]) }
        }
        #expect(throws: BenchError.self) { try items(in: [frame([UInt8](repeating: 0, count: 101))], limit: 100) }
        // Fragments each within the limit whose message is not.
        let joined =
            frame([UInt8](repeating: 0, count: 60), fin: false)
            + frame([UInt8](repeating: 0, count: 60), opcode: ServerFrameReader.continuation)
        #expect(throws: BenchError.self) { try items(in: [joined], limit: 100) }
    }
}
