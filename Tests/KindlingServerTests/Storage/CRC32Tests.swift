import KindlingCore
import Testing

@testable import KindlingServer

/// The log's checksum is the CRC-32 every earlier log was written with: the folding path and the
/// table path agree with the definition for every length and alignment around the 16-byte folds.
struct CRC32Tests {
    /// The CRC-32 by its definition, one bit at a time (reflected polynomial 0xEDB88320).
    static func reference(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    @Test func theCheckValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([]) == 0)
    }

    @Test func everyLengthAndAlignmentMatchesTheDefinition() {
        var generator = SeededGenerator(seed: 32)
        let bytes = (0..<700).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for start in 0..<16 {
            for length in 0...(bytes.count - start) where length < 200 || length % 7 == 0 {
                let slice = bytes[start..<(start + length)]
                let actual = slice.withUnsafeBytes { CRC32.checksum($0) }
                #expect(actual == Self.reference(slice), "start \(start), length \(length)")
            }
        }
    }

    @Test func extremeBytes() {
        for fill: UInt8 in [0x00, 0xFF, 0x80, 0x01] {
            for length in [16, 31, 32, 33, 48, 64, 127, 128, 129, 4096] {
                let bytes = [UInt8](repeating: fill, count: length)
                #expect(CRC32.checksum(bytes) == Self.reference(bytes), "fill \(fill), length \(length)")
            }
        }
    }
}
