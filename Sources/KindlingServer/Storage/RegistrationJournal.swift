import Foundation
import KindlingCore

/// The onDisconnect writes queued by a namespace's open connections, kept on disk so that a
/// server process that dies (kill -9, a crash) still makes them at its next start: every one of
/// those connections ended with the process. Cluster mode keeps them in NATS instead.
///
/// `ondisconnect.journal` in the namespace's directory is a list of changes, each
/// `[length: UInt32 LE][crc32: UInt32 LE][connection: UInt64 LE][change]`, where length and the
/// CRC-32 cover the connection and the change, and the change is JSON: a write queued
/// (`{"o":"set"|"update","p":[keys],"d":data}`, as a forwarded write without its identity), a
/// cancel (`{"x":[keys]}`), the identity the writes run as (`{"a":auth}`), or nothing: the
/// connection ended and its writes were made. A change costs what it says, however much the
/// connection has queued. Replaying the changes with the queue's own rules gives what each
/// connection had queued. The changes of a block are written before its answers go out, without
/// an fsync: they survive the process, not a power cut. Once the file has grown to four times
/// its size after the last rewrite, it is written again (atomically) with only what is queued
/// now, and so after a write that failed part-way.
/// Confined to the namespace's queue.
final class RegistrationJournal {
    static let fileName = "ondisconnect.journal"

    /// One change of a connection's queue.
    enum Change {
        /// A write queued, by a connection whose writes run as `auth` (noted first when the
        /// connection has nothing in the file yet).
        case queued(Operation, as: AuthState)
        case cancelled(Path)
        case identity(AuthState)
        case ended
    }

    private let path: String
    /// The connections with changes in the file since they last ended: only their cancels,
    /// identities and ends are worth noting.
    private(set) var journaled: Set<ConnectionID> = []
    /// Changes noted but not yet written.
    private var pending: [UInt8] = []
    private var fileBytes = 0
    private var bytesAfterRewrite = 0
    /// Set until the first rewrite (so this process's connections never mix with those of one
    /// before, whose ids were the same) and after a write that failed part-way (the file may
    /// end in a torn change): the next flush writes the file again whole.
    private var needsRewrite = true

    /// A journal for a process that has just taken over `directory` (see `takeOver`).
    init(directory: String) {
        path = directory + "/" + Self.fileName
    }

    /// Notes a change of `connection`'s queue, written at the next `flush`.
    func note(_ change: Change, of connection: ConnectionID) {
        let members: [JSONMember]
        switch change {
        case .queued(let operation, let auth):
            guard let write = ForwardedWrite(operation, auth: .anonymous, origin: .onDisconnect) else { return }
            if journaled.insert(connection).inserted { note(.identity(auth), of: connection) }
            members = write.operationMembers()
        case .cancelled(let at):
            guard journaled.contains(connection) else { return }
            members = [JSONMember("x", ForwardedWrite.encode(at))]
        case .identity(let auth):
            guard journaled.contains(connection) else { return }
            members = [JSONMember("a", ForwardedWrite.encode(auth))]
        case .ended:
            guard journaled.remove(connection) != nil else { return }
            return Self.frame(connection.value, [], into: &pending)
        }
        Self.frame(connection.value, Array(JSONWriter.string(.object(members)).utf8), into: &pending)
    }

    /// Whether changes wait to be written.
    var hasPending: Bool { !pending.isEmpty }

    /// Whether the next flush should write the file again from what is queued now.
    var wantsRewrite: Bool { needsRewrite || fileBytes + pending.count > max(Self.rewriteAbove, 4 * bytesAfterRewrite) }

    /// The file is not written again below this size.
    static let rewriteAbove = 1 << 20

    /// Appends the noted changes.
    func flush() throws {
        guard !pending.isEmpty else { return }
        defer { pending = [] }
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw StorageError.io("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        do {
            try pending.withUnsafeBytes { try StorageLayout.writeAll($0, to: descriptor, path: path) }
        } catch {
            needsRewrite = true
            throw error
        }
        fileBytes += pending.count
    }

    /// Replaces the file with `queued` (each connection's identity and writes, in order) and
    /// drops the noted changes, which `queued` already holds. A crash leaves either file whole.
    func rewrite(_ queued: [(connection: ConnectionID, auth: AuthState, writes: [Operation])]) throws {
        pending = []
        journaled = []
        for (connection, auth, writes) in queued {
            for write in writes { note(.queued(write, as: auth), of: connection) }
        }
        let bytes = pending
        pending = []
        try StorageLayout.writeAtomically(to: path) { descriptor, temporary in
            try bytes.withUnsafeBytes { try StorageLayout.writeAll($0, to: descriptor, path: temporary) }
        }
        needsRewrite = false
        fileBytes = bytes.count
        bytesAfterRewrite = bytes.count
    }

    /// What the connections of a process that died left queued in `directory`, in the order
    /// the file first names them, and the file removed: they are this start's to make, at most once.
    /// A torn or damaged change ends the reading, as a torn log record does; a change that
    /// does not read is skipped with its connection's other writes kept.
    static func takeOver(directory: String) throws -> (left: [StoredRegistrations], unreadable: Int) {
        let path = directory + "/" + fileName
        guard FileManager.default.fileExists(atPath: path) else { return ([], 0) }
        let bytes = try StorageLayout.readFile(path)
        var queues: [Int: (auth: AuthState, queue: OnDisconnectQueue)] = [:]
        var order: [Int] = []
        var unreadable = 0
        var offset = 0
        while bytes.count - offset >= 16 {
            let length = Int(LogRecord.readUInt32(bytes[...], at: offset))
            guard length >= 8, length <= bytes.count - offset - 8 else { break }
            let body = bytes[(offset + 8)..<(offset + 8 + length)]
            guard body.withUnsafeBytes({ CRC32.checksum($0) }) == LogRecord.readUInt32(bytes[...], at: offset + 4) else { break }
            offset += 8 + length
            let connection = Int(truncatingIfNeeded: LogRecord.readUInt64(bytes[...], at: body.startIndex))
            let change = body.dropFirst(8)
            guard !change.isEmpty else {
                queues[connection] = nil
                continue
            }
            if queues[connection] == nil {
                queues[connection] = (.anonymous, OnDisconnectQueue())
                order.append(connection)
            }
            do throws(ValidationError) {
                try replay(Array(change), into: &queues[connection, default: (.anonymous, OnDisconnectQueue())])
            } catch {
                unreadable += 1
            }
        }
        try FileManager.default.removeItem(atPath: path)
        let left = order.compactMap { connection -> StoredRegistrations? in
            guard let (auth, queue) = queues[connection] else { return nil }
            let writes = queue.operations.compactMap { operation -> ForwardedWrite? in
                switch operation {
                case .put(let path, let data):
                    return ForwardedWrite(.set(path: path, data: data, precondition: nil), auth: auth, origin: .onDisconnect)
                case .merge(let path, let members): return ForwardedWrite(.update(path: path, members: members), auth: auth, origin: .onDisconnect)
                }
            }
            return writes.isEmpty ? nil : StoredRegistrations(writes: writes)
        }
        return (left, unreadable)
    }

    /// Applies one change to a connection's queue as the namespace applied it.
    private static func replay(_ change: [UInt8], into entry: inout (auth: AuthState, queue: OnDisconnectQueue)) throws(ValidationError) {
        let json = try JSONParser.parse(change)
        if let auth = json["a"] {
            entry.auth = try ForwardedWrite.decodeAuth(auth)
        } else if let keys = json["x"] {
            entry.queue.cancel(at: try ForwardedWrite.decodePath(keys))
        } else if case .object(let members) = json {
            let operation: OnDisconnectQueue.Operation
            switch try ForwardedWrite.decode(.object(members + [JSONMember("a", ForwardedWrite.encode(AuthState.anonymous))])).operation {
            case .set(let path, let data, _): operation = .put(path, data)
            case .update(let path, let members): operation = .merge(path, members)
            default: throw ValidationError(.invalidData, "a journaled onDisconnect write is a set or an update")
            }
            entry.queue.dropOverwritten(by: operation.locations)
            entry.queue.append(operation, bytes: operation.bytes, locations: operation.locations)
        } else {
            throw ValidationError(.invalidData, "a journaled onDisconnect change is an object")
        }
    }

    /// Frames a change as a log record frames its write: length and CRC-32 of what follows.
    private static func frame(_ connection: Int, _ change: [UInt8], into bytes: inout [UInt8]) {
        var body: [UInt8] = []
        body.reserveCapacity(8 + change.count)
        LogRecord.append(UInt64(bitPattern: Int64(connection)), to: &body)
        body += change
        // A change is at most one realtime message's data (16 MB): the length fits.
        LogRecord.append(UInt32(truncatingIfNeeded: body.count), to: &bytes)
        LogRecord.append(CRC32.checksum(body), to: &bytes)
        bytes += body
    }
}
