#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CZlib

/// Compresses a stream of bytes into the gzip format, straight into an open file, so a snapshot
/// is never whole in memory, compressed or not.
final class GzipWriter {
    private let stream: UnsafeMutablePointer<z_stream>
    private let descriptor: Int32
    private let path: String
    private let output: UnsafeMutableBufferPointer<UInt8>
    /// Compressed bytes written to the file so far.
    private(set) var compressedCount = 0

    /// Writes to `descriptor` (named `path` in errors). Level 1, zlib's fastest: snapshots are
    /// written in the background of a running server, and inflating is as fast either way.
    init(descriptor: Int32, path: String, level: Int32 = 1) throws {
        self.descriptor = descriptor
        self.path = path
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        output = .allocate(capacity: 256 * 1024)
        let status = deflateInit2_(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            stream.deallocate()
            output.deallocate()
            throw Zlib.Failure(description: "deflateInit2 failed (\(status))")
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
        output.deallocate()
    }

    /// Compresses `bytes`, writing whatever output is ready.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(bytes.count)
        while stream.pointee.avail_in > 0 {
            try step(flush: Z_NO_FLUSH)
        }
    }

    /// Ends the gzip stream (its trailer holds the CRC-32 and length that reading checks).
    func finish() throws {
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
        while try step(flush: Z_FINISH) != Z_STREAM_END {}
    }

    @discardableResult
    private func step(flush: Int32) throws -> Int32 {
        stream.pointee.next_out = output.baseAddress
        stream.pointee.avail_out = uInt(output.count)
        let status = deflate(stream, flush)
        guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
            throw Zlib.Failure(description: "deflate failed (\(status))")
        }
        let produced = output.count - Int(stream.pointee.avail_out)
        try StorageLayout.writeAll(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: output[..<produced])), to: descriptor, path: path)
        compressedCount += produced
        return status
    }
}
