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

    private func frames(in reads: [[UInt8]], limit: Int = 1 << 20) throws -> [ServerFrameReader.Frame] {
        var reader = ServerFrameReader(maxFrameBytes: limit)
        var found: [ServerFrameReader.Frame] = []
        for read in reads {
            reader.append(ByteBuffer(bytes: read))
            while let next = try reader.next() { found.append(next) }
        }
        return found
    }

    @Test("short, 16-bit and 64-bit lengths, several frames in one read")
    func lengths() throws {
        let short = Array("hi".utf8), medium = [UInt8](repeating: 7, count: 300), long = [UInt8](repeating: 9, count: 70_000)
        let found = try frames(in: [frame(short) + frame(medium) + frame(long, opcode: ServerFrameReader.binary)])
        #expect(found.map(\.payload) == [ByteBuffer(bytes: short), ByteBuffer(bytes: medium), ByteBuffer(bytes: long)])
        #expect(found.map(\.opcode) == [ServerFrameReader.text, ServerFrameReader.text, ServerFrameReader.binary])
    }

    @Test("a frame cut at every byte is found once, whole")
    func cut() throws {
        let bytes = frame([UInt8](repeating: 1, count: 200)) + frame(Array("ok".utf8), opcode: ServerFrameReader.ping)
        for split in 1..<bytes.count {
            let found = try frames(in: [Array(bytes[..<split]), Array(bytes[split...])])
            #expect(found.map(\.payload.readableBytes) == [200, 2], "split at \(split)")
        }
        let byteAtATime = try frames(in: bytes.map { [$0] })
        #expect(byteAtATime.map(\.opcode) == [ServerFrameReader.text, ServerFrameReader.ping])
    }

    @Test("the final bit is kept for fragments")
    func fragments() throws {
        let found = try frames(in: [frame(Array("ab".utf8), fin: false) + frame(Array("cd".utf8), opcode: ServerFrameReader.continuation)])
        #expect(found.map(\.fin) == [false, true])
    }

    @Test("what a server must not send is refused")
    func refused() {
        let masked: [UInt8] = [0x81, 0x82, 1, 2, 3, 4, 0, 0]
        let reserved: [UInt8] = [0x83, 0x00]
        let rsv: [UInt8] = [0xC1, 0x00]
        let longPing = frame([UInt8](repeating: 0, count: 126), opcode: ServerFrameReader.ping)
        let fragmentedClose = frame([], opcode: ServerFrameReader.close, fin: false)
        let huge: [UInt8] = [0x81, 127, 0x80, 0, 0, 0, 0, 0, 0, 0]
        for bytes in [masked, reserved, rsv, longPing, fragmentedClose, huge] {
            #expect(throws: BenchError.self) { try frames(in: [bytes]) }
        }
        #expect(throws: BenchError.self) { try frames(in: [frame([UInt8](repeating: 0, count: 101))], limit: 100) }
    }
}
