#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes `kindling export`'s output a chunk at a time, gzipped or not, to standard output or
/// to a file. A file is written as `<path>.tmp`, synced and renamed into place by `finish`, so
/// an export that fails or is interrupted never leaves a file that looks complete.
public final class ExportFileWriter {
    /// The file as named (`-` for standard output).
    public let path: String
    private let descriptor: Int32
    private let gzip: GzipWriter?
    private var finished = false
    /// Bytes of JSON written so far (before compression).
    public private(set) var count = 0

    /// The file being written while it is incomplete.
    private var temporary: String { path + ".tmp" }

    public init(path: String, gzip compress: Bool) throws(BackupError) {
        self.path = path
        if path == "-" {
            descriptor = STDOUT_FILENO
        } else {
            descriptor = open(path + ".tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw .io("cannot create \(path).tmp: \(String(cString: strerror(errno)))") }
        }
        do {
            gzip = compress ? try GzipWriter(descriptor: descriptor, path: path, level: BackupWriter.gzipLevel) : nil
        } catch {
            if path != "-" {
                close(descriptor)
                unlink(path + ".tmp")
            }
            throw .io("\(error)")
        }
    }

    deinit {
        guard path != "-", !finished else { return }
        close(descriptor)
        unlink(temporary)
    }

    /// Writes the next bytes.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(BackupError) {
        do {
            if let gzip {
                try gzip.write(bytes)
            } else {
                try StorageLayout.writeAll(bytes, to: descriptor, path: path)
            }
        } catch {
            throw .io("cannot write \(path == "-" ? "the output" : path): \(error)")
        }
        count += bytes.count
    }

    /// Writes the next bytes.
    public func write(_ bytes: [UInt8]) throws(BackupError) {
        let result: Result<Void, BackupError> = bytes.withUnsafeBytes { raw in Result { () throws(BackupError) in try write(raw) } }
        try result.get()
    }

    /// Ends the output: the gzip trailer, and for a file, synced and renamed into place.
    public func finish() throws(BackupError) {
        do {
            try gzip?.finish()
        } catch {
            throw .io("cannot write \(path): \(error)")
        }
        guard path != "-" else { return }
        finished = true
        defer { close(descriptor) }
        guard fsync(descriptor) == 0, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .io("cannot finish \(path): \(reason)")
        }
    }
}
