#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a backup or export file a chunk at a time, for `kindling import`: gunzipped when it
/// starts with gzip's magic bytes (`1f 8b`, whatever its name), else as it is, from a file or
/// standard input (`-`). A file of gigabytes is read in the memory of one chunk; a truncated or
/// damaged gzip stream is an error, never a shorter document.
public final class BackupFileReader {
    /// The file as named (`-` for standard input).
    public let path: String
    /// Its size on disk, for progress; nil for a pipe.
    public let fileSize: Int?
    /// The file is gzipped.
    public let isGzip: Bool

    private let descriptor: Int32
    private let gzip: GzipReader?
    /// The first bytes, read to tell gzip, not yet handed out (plain files only).
    private var first: [UInt8]
    private var plainCount = 0

    public init(path: String) throws(BackupError) {
        self.path = path
        let descriptor = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        self.descriptor = descriptor
        var status = stat()
        fileSize = fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG ? Int(status.st_size) : nil
        var head = [UInt8](repeating: 0, count: 2)
        var count = 0
        do {
            while count < 2 {
                let read = try head.withUnsafeMutableBufferPointer {
                    try StorageLayout.readSome(descriptor, into: UnsafeMutableBufferPointer(rebasing: $0[count...]))
                }
                if read == 0 { break }
                count += read
            }
            head.removeLast(2 - count)
            isGzip = head == [0x1f, 0x8b]
            gzip = isGzip ? try GzipReader(descriptor: descriptor, closing: false, first: head) : nil
        } catch {
            if path != "-" { close(descriptor) }
            throw .unreadable(path: path, reason: "\(error)")
        }
        first = isGzip ? [] : head
    }

    deinit {
        if path != "-" { close(descriptor) }
    }

    /// Bytes of the file (compressed, for a gzipped one) read so far: progress against
    /// `fileSize`.
    public var fileBytesRead: Int { gzip?.compressedCount ?? plainCount }

    /// Fills `buffer` with the next bytes of the JSON; 0 only at the end (of the verified
    /// gzip stream, for a gzipped file).
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(BackupError) -> Int {
        do {
            if let gzip { return try gzip.read(into: buffer) }
            if !first.isEmpty, let base = buffer.baseAddress {
                let count = min(first.count, buffer.count)
                base.copyMemory(from: first, byteCount: count)
                first.removeFirst(count)
                plainCount += count
                return count
            }
            let count = try StorageLayout.readSome(descriptor, into: buffer.bindMemory(to: UInt8.self))
            plainCount += count
            return count
        } catch {
            throw .unreadable(path: path, reason: "\(error)")
        }
    }
}
