import CZlib

/// CRC-32 from the system's zlib, which every machine has (`GzipWriter` and `GzipReader` use its
/// streams).
enum Zlib {
    /// The CRC-32 (IEEE) of `bytes`.
    static func crc32(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress else { return UInt32(CZlib.crc32(0, nil, 0)) }
        return UInt32(CZlib.crc32(0, base.assumingMemoryBound(to: Bytef.self), uInt(bytes.count)))
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 { bytes.withUnsafeBytes { crc32($0) } }

    /// What went wrong in zlib.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }
}
