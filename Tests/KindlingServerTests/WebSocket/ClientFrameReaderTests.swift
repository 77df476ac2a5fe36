import KindlingCore
import NIOCore
import NIOWebSocket
import Testing

@testable import KindlingServer

/// The session reads client frames from the socket's bytes itself: every frame must come out
/// whole, unmasked as SwiftNIO unmasks, however the bytes are split across reads, and what RFC
/// 6455 forbids from a client must be refused from its header alone.
struct ClientFrameReaderTests {
    struct Read: Equatable {
        var fin: Bool
        var opcode: ClientFrameReader.Opcode
        var payload: [UInt8]
    }

    /// A client frame: header (7-bit, 16-bit or 64-bit length), key, payload masked by SwiftNIO.
    static func frame(
        fin: Bool = true, opcode: UInt8, _ payload: [UInt8], key: WebSocketMaskingKey? = WebSocketMaskingKey([1, 2, 3, 4]), rsv: UInt8 = 0,
        longForm: Bool = false
    ) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | rsv << 4 | opcode]
        let mask: UInt8 = key == nil ? 0 : 0x80
        if longForm || payload.count > 65_535 {
            bytes.append(mask | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: UInt64(payload.count) >> UInt64(shift))) }
        } else if payload.count > 125 {
            bytes += [mask | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes.append(mask | UInt8(payload.count))
        }
        guard let key else { return bytes + payload }
        var masked = ByteBuffer(bytes: payload)
        masked.webSocketMask(key)
        return bytes + Array(key) + Array(masked.readableBytesView)
    }

    /// Feeds `chunks` to one reader, collecting the frames.
    static func read(_ chunks: [[UInt8]], limit: Int = 1 << 20) throws(ClientFrameReader.Refusal) -> (frames: [Read], pending: Int) {
        var reader = ClientFrameReader(maxFrameBytes: limit)
        var frames: [Read] = []
        for chunk in chunks {
            try reader.read(ByteBuffer(bytes: chunk)) { fin, opcode, payload in
                frames.append(Read(fin: fin, opcode: opcode, payload: Array(payload)))
                return true
            }
        }
        return (frames, reader.pendingBytes)
    }

    @Test func unmasksEveryLengthAndKeyAsSwiftNIODoes() throws {
        var random = SeededGenerator(seed: 16)
        let lengths = Array(0...33) + [125, 126, 127, 1_023, 1_024, 1_025, 5_000, 65_535, 65_536, 70_000]
        for length in lengths {
            let key = WebSocketMaskingKey.random(using: &random)
            let plain = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            let read = try Self.read([Self.frame(opcode: 1, plain, key: key)])
            #expect(read.frames == [Read(fin: true, opcode: .text, payload: plain)], "length \(length)")
            #expect(read.pending == 0)
        }
    }

    @Test func framesSplitAtEveryByteComeOutWholeAndInOrder() throws {
        let stream =
            Self.frame(opcode: 1, Array(#"{"t":"d","d":{"r":1}}"#.utf8)) + Self.frame(fin: false, opcode: 1, Array("ab".utf8))
            + Self.frame(opcode: 9, Array("ping".utf8)) + Self.frame(opcode: 0, Array(repeating: 0x63, count: 300))
            + Self.frame(opcode: 1, [], longForm: true) + Self.frame(opcode: 2, [0, 1, 2])
        let whole = try Self.read([stream]).frames
        #expect(whole.map(\.opcode) == [.text, .text, .ping, .continuation, .text, .binary])
        #expect(whole[3].payload.count == 300)
        for split in 0...stream.count {
            let parts = try Self.read([Array(stream[..<split]), Array(stream[split...])])
            #expect(parts.frames == whole, "split at \(split)")
            #expect(parts.pending == 0)
        }
        // A byte at a time.
        #expect(try Self.read(stream.map { [$0] }).frames == whole)
    }

    @Test func aFrameNotYetWholeIsHeldAndOnlyItsBytes() throws {
        var reader = ClientFrameReader(maxFrameBytes: 1 << 20)
        let first = Self.frame(opcode: 1, Array("one".utf8)), second = Self.frame(opcode: 1, Array(repeating: 0x61, count: 200))
        var seen: [[UInt8]] = []
        try reader.read(ByteBuffer(bytes: first + second.prefix(50))) { _, _, payload in
            seen.append(Array(payload))
            return true
        }
        #expect(seen == [Array("one".utf8)])
        #expect(reader.pendingBytes == 50)
        try reader.read(ByteBuffer(bytes: second.dropFirst(50))) { _, _, payload in
            seen.append(Array(payload))
            return true
        }
        #expect(seen.count == 2 && seen[1].count == 200)
        #expect(reader.pendingBytes == 0)
    }

    @Test func stoppingDropsTheFramesAfter() throws {
        var reader = ClientFrameReader(maxFrameBytes: 1 << 20)
        let stream = Self.frame(opcode: 8, []) + Self.frame(opcode: 1, Array("after".utf8)) + [0x81]
        var count = 0
        try reader.read(ByteBuffer(bytes: stream)) { _, _, _ in
            count += 1
            return false
        }
        #expect(count == 1)
        #expect(reader.pendingBytes == 0)
    }

    @Test(arguments: [
        ("unmasked", frame(opcode: 1, Array("0".utf8), key: nil), ClientFrameReader.Refusal.unmasked),
        ("rsv1", frame(opcode: 1, Array("0".utf8), rsv: 4), .reservedBits),
        ("rsv3", frame(opcode: 1, Array("0".utf8), rsv: 1), .reservedBits),
        ("reserved data opcode", frame(opcode: 3, Array("0".utf8)), .reservedOpcode(3)),
        ("reserved control opcode", frame(opcode: 0xB, []), .reservedOpcode(0xB)),
        ("fragmented ping", frame(fin: false, opcode: 9, []), .longOrFragmentedControlFrame),
        ("long close", frame(opcode: 8, Array(repeating: 0, count: 126)), .longOrFragmentedControlFrame),
    ])
    func refusesWhatAClientMayNotSend(name: String, frame: [UInt8], refusal: ClientFrameReader.Refusal) {
        #expect(throws: refusal, "\(name)") { try Self.read([frame]) }
        #expect(refusal.closeCode == .protocolError)
    }

    @Test func aFrameOverTheLimitIsRefusedFromItsHeader() throws {
        // Only the header of a frame claiming 2^62 bytes, and one just over a small limit.
        let huge: [UInt8] = [0x81, 0xFF, 0x40, 0, 0, 0, 0, 0, 0, 0]
        #expect(throws: ClientFrameReader.Refusal.tooLarge(limit: 100)) { try Self.read([huge], limit: 100) }
        let over = Array(Self.frame(opcode: 1, Array(repeating: 0x61, count: 101)).prefix(4))
        #expect(throws: ClientFrameReader.Refusal.tooLarge(limit: 100)) { try Self.read([over], limit: 100) }
        #expect(ClientFrameReader.Refusal.tooLarge(limit: 100).closeCode == .messageTooLarge)
        #expect(try Self.read([Self.frame(opcode: 1, Array(repeating: 0x61, count: 100))], limit: 100).frames.count == 1)
    }

    @Test func asciiIsToldFromAnyHighByteAtAnyPlace() {
        for length in 0...20 {
            let ascii = [UInt8](repeating: 0x7F, count: length)
            #expect(ascii.withUnsafeBytes { FramePayload.isASCII($0) })
            for place in 0..<length {
                var bytes = ascii
                bytes[place] = 0x80
                #expect(!bytes.withUnsafeBytes { FramePayload.isASCII($0) }, "length \(length), place \(place)")
            }
        }
    }
}
