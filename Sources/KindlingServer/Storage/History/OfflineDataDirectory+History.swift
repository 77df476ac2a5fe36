import Foundation
import KindlingCore
import Logging

/// Point-in-time restore and the list of changes on a data directory no server runs on
/// (`kindling restore --data-dir`, `kindling history --data-dir`).
extension OfflineDataDirectory {
    /// Writes the data at `path` in `namespace` as it was at `time` to the same path of
    /// `target` (the same namespace for an in-place restore), as one logged write committed
    /// now: a server started afterwards sees it as an ordinary change, and the history keeps
    /// it, so the restore itself can be undone by restoring an earlier instant. Returns the
    /// restored data's size in bytes (export-form JSON).
    public static func restore(
        directory: String, namespace: String, at time: Int64, path: Path, into target: String, logger: Logger
    ) throws -> Int {
        let lock = try DataDirectoryLock(directory: directory, server: false)
        defer { lock.release() }
        let source = StorageLayout.directory(dataDirectory: directory, namespace: namespace)
        guard FileManager.default.fileExists(atPath: source) else {
            throw HistoryError.unavailable("namespace \(namespace) has no data in \(directory)")
        }
        let node = try NamespaceHistory(directory: source, policy: nil, logger: logger).tree(at: time).child(at: path)
        let folder = StorageLayout.directory(dataDirectory: directory, namespace: target)
        try StorageLayout.createDirectory(folder)
        let recovered = try NamespaceStorage.recover(directory: folder, repair: false, logger: logger)
        var writer = JSONWriter()
        node.write(to: &writer, format: .export)
        // A log record's length is 32 bits.
        guard writer.bytes.count < Int(UInt32.max) - 4096 else {
            throw StorageError.io("the restored data is over 4 GB as JSON; restore a smaller path")
        }
        let record = LogRecord(sequence: recovered.lastSequence + 1, write: .set(path, node), time: max(HistoryTime.now(), recovered.lastTime))
        let bytes = record.encoded()
        // A segment of its own, written whole (synced and renamed into place), after the others.
        try StorageLayout.writeAtomically(to: StorageLayout.segmentPath(folder, startingAt: record.sequence)) { descriptor, temporary in
            try bytes.withUnsafeBytes { try StorageLayout.writeAll($0, to: descriptor, path: temporary) }
        }
        return writer.bytes.count
    }

    /// The writes to `path` in `namespace` from `from` through `to`, the most recent `limit`,
    /// oldest first.
    public static func changes(
        directory: String, namespace: String, path: Path, from: Int64, to: Int64, limit: Int, logger: Logger
    ) throws -> [HistoryChange] {
        let lock = try DataDirectoryLock(directory: directory, server: false)
        defer { lock.release() }
        let folder = StorageLayout.directory(dataDirectory: directory, namespace: namespace)
        guard FileManager.default.fileExists(atPath: folder) else { return [] }
        return try NamespaceHistory(directory: folder, policy: nil, logger: logger).changes(at: path, from: from, through: to, limit: limit)
    }
}
