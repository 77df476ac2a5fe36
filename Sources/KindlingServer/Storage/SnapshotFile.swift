import KindlingCore

/// A snapshot on disk: the whole tree in the binary snapshot format (`SnapshotEncoder`), inside
/// a gzip container. Both directions stream, a chunk at a time, so neither writing nor loading
/// ever holds the file, or its decompressed bytes, whole in memory.
enum SnapshotFile {
    /// What writing a snapshot produced.
    struct Written {
        var compressedBytes: Int
        var bytes: Int
    }

    /// Writes `root` to `path` atomically (a temporary file, synced, then renamed into place).
    static func write(_ root: Node, to path: String) throws -> Written {
        var written = Written(compressedBytes: 0, bytes: 0)
        try StorageLayout.writeAtomically(to: path) { descriptor, temporary in
            let gzip = try GzipWriter(descriptor: descriptor, path: temporary)
            written.bytes = try SnapshotEncoder.encode(root) { try gzip.write($0) }
            try gzip.finish()
            written.compressedBytes = gzip.compressedCount
        }
        return written
    }

    /// Loads the tree in `path`, with the number of decompressed bytes it held; big parents'
    /// blocks are decoded on the other cores. A damaged, truncated or foreign file is a
    /// `StorageError.corruptSnapshot` naming it.
    static func read(_ path: String) throws -> (root: Node, bytes: Int) {
        var bytes = 0
        do {
            let gzip = try GzipReader(path: path)
            let root = try SnapshotDecoder.decode(scheduler: ParallelSnapshotBlocks()) { buffer in
                let count = try gzip.read(into: buffer)
                bytes += count
                return count
            }
            return (root, bytes)
        } catch {
            throw StorageError.corruptSnapshot(file: path, reason: "\(error)")
        }
    }
}
