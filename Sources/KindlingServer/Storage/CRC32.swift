import CCRC32

/// The CRC-32 (IEEE, zlib's) that frames each log record: computed with carry-less
/// multiplication where the processor has it (`CCRC32`), the same value as zlib's everywhere.
enum CRC32 {
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress else { return 0 }
        return kindling_crc32(0, base.assumingMemoryBound(to: UInt8.self), bytes.count)
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 { bytes.withUnsafeBytes { checksum($0) } }
}
