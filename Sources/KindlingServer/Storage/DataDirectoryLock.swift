#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive lock on a data directory, so a server and an offline tool (or two servers) never
/// write the same files. Released when the process ends, however it ends.
///
/// While a server holds it, the lock file holds the server's process id, so `kindling snapshot`
/// can find the server that owns a data directory and signal it; an offline tool leaves the file
/// empty (a signal meant for a server would end it).
final class DataDirectoryLock: Sendable {
    private let descriptor: Int32

    init(directory: String, server: Bool) throws {
        try StorageLayout.createDirectory(directory)
        let path = DataDirectoryLock.path(directory)
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw StorageError.io("cannot open \(path): \(String(cString: strerror(errno)))") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw StorageError.io(
                "\(directory) is in use by a running Kindling server (or another tool); stop it, or use --url to go through the server")
        }
        // A failure here leaves the lock intact; `kindling snapshot` reports the missing id.
        _ = ftruncate(descriptor, 0)
        if server {
            let pid = Array("\(getpid())\n".utf8)
            _ = pwrite(descriptor, pid, pid.count, 0)
        }
        self.descriptor = descriptor
    }

    func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    static func path(_ directory: String) -> String { directory + "/kindling.lock" }

    /// The server that holds the lock on `directory`, or nil when nothing holds it. Throws when
    /// the directory is locked by something that is not a server (an offline export or import).
    static func holder(of directory: String) throws -> Int32? {
        let path = path(directory)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        if flock(descriptor, LOCK_SH | LOCK_NB) == 0 {
            flock(descriptor, LOCK_UN)
            return nil
        }
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = read(descriptor, &bytes, bytes.count)
        let text = String(decoding: bytes.prefix(max(0, count)), as: UTF8.self).split(separator: "\n").first
        guard let pid = text.flatMap({ Int32($0) }), pid > 0 else {
            throw StorageError.io("\(directory) is in use by an offline tool (kindling export or import), not a server")
        }
        return pid
    }
}
