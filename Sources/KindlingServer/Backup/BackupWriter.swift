#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import KindlingCore

/// Writes one namespace's backup files into the backup directory, each atomically (a
/// temporary file, synced, renamed into place, the directory synced): the rules first, then
/// the data, so a complete data file always has its rules beside it, and a process killed
/// mid-backup leaves only a `.tmp` file that no restore takes for a backup.
enum BackupWriter {
    /// What a backup wrote.
    struct Written: Sendable, Equatable {
        /// The data file's path.
        var dataPath: String
        /// The data file's size (gzipped).
        var bytes: Int
        /// The size of the JSON it holds.
        var jsonBytes: Int
    }

    /// zlib's default level: backups are few and kept long, so size matters more than for
    /// snapshots (which use the fastest level).
    static let gzipLevel: Int32 = 6

    /// Writes `capture` to `directory`; `shouldStop` is asked between chunks, and a `true`
    /// abandons the backup (its temporary file removed) with `BackupError.stopped`.
    static func write(_ capture: BackupCapture, to directory: String, shouldStop: @escaping () -> Bool) throws(BackupError) -> Written {
        let rules = BackupFileName(time: capture.time, namespace: capture.namespace, kind: .rules)
        let data = rules.sibling(.data)
        let dataPath = directory + "/" + data.description
        var written = Written(dataPath: dataPath, bytes: 0, jsonBytes: 0)
        do {
            let rulesBytes = Array(capture.rules.utf8)
            try StorageLayout.writeAtomically(to: directory + "/" + rules.description) { descriptor, temporary in
                try rulesBytes.withUnsafeBytes { try StorageLayout.writeAll($0, to: descriptor, path: temporary) }
            }
            try StorageLayout.writeAtomically(to: dataPath) { descriptor, temporary in
                let gzip = try GzipWriter(descriptor: descriptor, path: temporary, level: gzipLevel)
                var stream = ExportJSONStream { bytes in
                    if shouldStop() { throw BackupError.stopped }
                    try gzip.write(bytes)
                }
                try stream.write(capture.root)
                try stream.finish()
                try gzip.finish()
                written.bytes = gzip.compressedCount
                written.jsonBytes = stream.count
            }
        } catch let error as BackupError {
            throw error
        } catch {
            throw .io("\(error)")
        }
        return written
    }

    /// The backup files in `directory` (others are ignored).
    static func list(_ directory: String) throws(BackupError) -> [BackupFileName] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: directory).compactMap(BackupFileName.init(parsing:))
        } catch {
            throw .io("cannot list \(directory): \(error.localizedDescription)")
        }
    }

    /// Deletes `names` from `directory`; a file already gone is no failure.
    static func delete(_ names: [BackupFileName], in directory: String) throws(BackupError) {
        for name in names {
            let path = directory + "/" + name.description
            guard unlink(path) == 0 || errno == ENOENT else {
                throw .io("cannot delete \(path): \(String(cString: strerror(errno)))")
            }
        }
    }
}
