import Foundation

/// The onDisconnect writes queued by a namespace's open connections, kept on disk so that a
/// server process that dies (kill -9, a crash) still makes them at its next start: every one of
/// those connections ended with the process. Cluster mode keeps them in NATS instead.
///
/// `ondisconnect.journal` in the namespace's directory is a list of changes, each
/// `[length: UInt32 LE][crc32: UInt32 LE][connection: UInt64 LE][registrations]`, where length
/// and the CRC-32 cover the connection and the registrations (`StoredRegistrations`' bytes; none
/// when the connection has nothing queued any more). The last change of a connection is what it
/// has queued. Each change is written before the client's `ok` and without an fsync: it survives
/// the process, not a power cut. When the file is mostly changes overtaken by later ones, it is
/// written again with only what is queued now. Confined to the namespace's queue.
final class RegistrationJournal {
    static let fileName = "ondisconnect.journal"

    private let path: String
    /// What each connection with queued writes has queued, as written last.
    private var queued: [Int: [UInt8]] = [:]
    private var queuedBytes = 0
    private var fileBytes = 0

    /// A journal for a process that has just taken over `directory` (see `takeOver`).
    init(directory: String) {
        path = directory + "/" + Self.fileName
    }

    /// The registrations a process that died left in `directory`, in the order their
    /// connections queued them, and the file removed: they are this start's to make, at most
    /// once. A torn or damaged change ends the reading, as a torn log record does.
    static func takeOver(directory: String) throws -> [StoredRegistrations] {
        let path = directory + "/" + fileName
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        let bytes = [UInt8](data)
        var latest: [Int: [UInt8]] = [:]
        var order: [Int] = []
        var offset = 0
        while bytes.count - offset >= 16 {
            let length = Int(readUInt32(bytes, at: offset))
            guard length >= 8, length <= bytes.count - offset - 8 else { break }
            let body = bytes[(offset + 8)..<(offset + 8 + length)]
            guard body.withUnsafeBytes({ CRC32.checksum($0) }) == readUInt32(bytes, at: offset + 4) else { break }
            let connection = Int(truncatingIfNeeded: readUInt64(bytes, at: offset + 8))
            if latest[connection] == nil { order.append(connection) }
            latest[connection] = Array(body.dropFirst(8))
            offset += 8 + length
        }
        try FileManager.default.removeItem(atPath: path)
        return try order.compactMap { connection in
            guard let value = latest[connection], !value.isEmpty else { return nil }
            return try StoredRegistrations.decode(value)
        }
    }

    /// Records what `connection` has queued now (nil or empty: nothing).
    func record(_ connection: ConnectionID, _ registrations: [UInt8]?) throws {
        let value = registrations ?? []
        let old = queued[connection.value]
        guard !(old == nil && value.isEmpty), old != value else { return }
        let change = Self.change(connection.value, value)
        queuedBytes -= old.map { $0.count + 16 } ?? 0
        queued[connection.value] = value.isEmpty ? nil : value
        queuedBytes += value.isEmpty ? 0 : change.count
        if fileBytes > Self.rewriteAbove, fileBytes > 4 * queuedBytes {
            try rewrite()
        } else {
            try append(change)
        }
    }

    /// The file is written again from `queued` once it passes this size and is mostly stale.
    static let rewriteAbove = 1 << 20

    private func append(_ change: [UInt8]) throws {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw StorageError.io("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        try Self.writeAll(change, to: descriptor, path: path)
        fileBytes += change.count
    }

    /// Writes every queued connection's change to a new file, synced, and renames it over the
    /// journal, so a crash leaves either file whole (a `.tmp` left behind is removed at start).
    private func rewrite() throws {
        var bytes: [UInt8] = []
        for (connection, value) in queued { bytes += Self.change(connection, value) }
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw StorageError.io("cannot open \(temporary): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        try Self.writeAll(bytes, to: descriptor, path: temporary)
        guard fsync(descriptor) == 0, rename(temporary, path) == 0 else {
            throw StorageError.io("cannot replace \(path): \(String(cString: strerror(errno)))")
        }
        fileBytes = bytes.count
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32, path: String) throws {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress else { return 0 }
                return write(descriptor, base + written, buffer.count - written)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw StorageError.io("cannot write \(path): \(String(cString: strerror(errno)))") }
            written += count
        }
    }

    private static func change(_ connection: Int, _ value: [UInt8]) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(8 + value.count)
        for shift in stride(from: 0, to: 64, by: 8) { body.append(UInt8(truncatingIfNeeded: UInt64(bitPattern: Int64(connection)) >> UInt64(shift))) }
        body += value
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8 + body.count)
        for value in [UInt32(body.count), CRC32.checksum(body)] {
            for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
        }
        return bytes + body
    }

    private static func readUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << UInt32(8 * $1) }
    }

    private static func readUInt64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << UInt64(8 * $1) }
    }
}
