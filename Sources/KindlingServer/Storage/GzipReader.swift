#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CZlib

/// Decompresses a gzip file a chunk at a time, so reading a snapshot holds one chunk of it, not
/// the whole file. The end of the data is reported only once the gzip trailer (CRC-32 and length)
/// has been checked, so a truncated or damaged file is always an error, never a short tree.
final class GzipReader {
    private let stream: UnsafeMutablePointer<z_stream>
    private let descriptor: Int32
    private let closesDescriptor: Bool
    private let input: UnsafeMutableBufferPointer<UInt8>
    private var inputEnded = false
    private var finished = false
    /// Bytes the compressed file had given up to the last read (for an import's progress).
    private(set) var compressedCount = 0

    convenience init(path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Zlib.Failure(description: "cannot open: \(String(cString: strerror(errno)))") }
        try self.init(descriptor: descriptor, closing: true)
    }

    /// Reads the gzip stream from `descriptor`, after `first`, bytes of it already read from
    /// the descriptor (a pipe cannot be read twice to tell gzip by its first bytes); closes the
    /// descriptor when done if `closing`.
    init(descriptor: Int32, closing: Bool, first: [UInt8] = []) throws {
        self.descriptor = descriptor
        closesDescriptor = closing
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        input = .allocate(capacity: max(1 << 20, first.count))
        let status = inflateInit2_(stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            if closing { close(descriptor) }
            stream.deallocate()
            input.deallocate()
            throw Zlib.Failure(description: "inflateInit2 failed (\(status))")
        }
        if !first.isEmpty {
            _ = input.initialize(from: first)
            stream.pointee.next_in = input.baseAddress
            stream.pointee.avail_in = uInt(first.count)
            compressedCount = first.count
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
        input.deallocate()
        if closesDescriptor { close(descriptor) }
    }

    /// Fills `buffer` with decompressed bytes, returning how many: 0 only at the verified end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard !finished, let base = buffer.baseAddress, !buffer.isEmpty else { return 0 }
        stream.pointee.next_out = base.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(buffer.count)
        while stream.pointee.avail_out > 0 {
            if stream.pointee.avail_in == 0 && !inputEnded { try refill() }
            let status = inflate(stream, Z_NO_FLUSH)
            if status == Z_STREAM_END {
                finished = true
                if stream.pointee.avail_in > 0 { throw Zlib.Failure(description: "data after the end of the gzip stream") }
                if !inputEnded {
                    try refill()
                    if stream.pointee.avail_in > 0 { throw Zlib.Failure(description: "data after the end of the gzip stream") }
                }
                break
            }
            if status == Z_BUF_ERROR && inputEnded { throw Zlib.Failure(description: "the file ends early (truncated gzip stream)") }
            guard status == Z_OK || status == Z_BUF_ERROR else {
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                throw Zlib.Failure(description: "damaged gzip data: \(message)")
            }
        }
        return buffer.count - Int(stream.pointee.avail_out)
    }

    private func refill() throws {
        let count = try StorageLayout.readSome(descriptor, into: input)
        if count == 0 { inputEnded = true }
        compressedCount += count
        stream.pointee.next_in = input.baseAddress
        stream.pointee.avail_in = uInt(count)
    }
}
