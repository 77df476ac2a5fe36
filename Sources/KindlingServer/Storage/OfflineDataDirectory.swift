import Foundation
import KindlingCore
import Logging

/// Reads and writes a data directory while no server runs on it: `kindling export` and
/// `kindling import` without a server.
public enum OfflineDataDirectory {
    /// The data at `path` in `namespace`, as export-form JSON (priorities included, so an import
    /// gives back the same tree).
    public static func export(directory: String, namespace: String, path: Path, format: JSONFormat = .export, logger: Logger) throws -> [UInt8] {
        let lock = try DataDirectoryLock(directory: directory, server: false)
        defer { lock.release() }
        let folder = StorageLayout.directory(dataDirectory: directory, namespace: namespace)
        let recovered = try NamespaceStorage.recover(directory: folder, repair: false, logger: logger)
        var writer = JSONWriter()
        recovered.root.child(at: path).write(to: &writer, format: format)
        return writer.bytes
    }

    /// Replaces the data at `path` in `namespace` with `json` (export form or plain JSON), as one
    /// snapshot that supersedes the namespace's earlier files. `progress` hears each phase.
    public static func importJSON(
        _ json: [UInt8],
        directory: String,
        namespace: String,
        path: Path,
        logger: Logger,
        progress: (String) -> Void
    ) throws {
        let lock = try DataDirectoryLock(directory: directory, server: false)
        defer { lock.release() }
        let folder = StorageLayout.directory(dataDirectory: directory, namespace: namespace)
        try StorageLayout.createDirectory(folder)
        progress("loading namespace \(namespace)")
        let recovered = try NamespaceStorage.recover(directory: folder, repair: false, logger: logger)
        progress("parsing \(json.count) bytes")
        let value = try JSONParser.parse(json)
        progress("validating")
        var tree = DataTree(root: recovered.root)
        tree.apply(.set(path, try Node(json: value, at: path)))
        progress("writing the snapshot")
        let sequence = recovered.lastSequence + 1
        let written = try SnapshotFile.write(tree.root, to: StorageLayout.snapshotPath(folder, sequence: sequence))
        // What the import replaces stays in the history, when the namespace keeps one, so the
        // import can be undone; the server's next start purges it by its own policy.
        let keeps = FileManager.default.fileExists(atPath: StorageLayout.historyDirectory(folder))
        NamespaceHistory(directory: folder, policy: keeps ? .keepAll : nil, compression: .inline, logger: logger).retire(through: sequence)
        progress("done: \(json.count) bytes of JSON stored as a \(written.compressedBytes)-byte snapshot in \(folder)")
    }
}
