/// Writes a tree in the snapshot format (see `SnapshotFormat`) in chunks, so a snapshot of any
/// size streams to its file without ever being whole in memory.
public struct SnapshotEncoder {
    private var buffer: [UInt8] = []
    private let chunkSize: Int
    private var written = 0

    private init(chunkSize: Int) {
        self.chunkSize = chunkSize
        buffer.reserveCapacity(min(chunkSize, SnapshotFormat.blockBytes) + 64)
    }

    /// Encodes `root`, handing `write` about `chunkSize` bytes at a time, and returns the number
    /// of bytes written.
    public static func encode(
        _ root: Node,
        chunkSize: Int = 1 << 20,
        to write: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> Int {
        var encoder = SnapshotEncoder(chunkSize: chunkSize)
        encoder.buffer.append(contentsOf: SnapshotFormat.magic)
        encoder.buffer.append(SnapshotFormat.version)
        try encoder.node(root, write)
        try encoder.flush(write)
        return encoder.written
    }

    private mutating func node(_ node: Node, _ write: (UnsafeRawBufferPointer) throws -> Void) throws {
        let priority = node.priority
        let flag = priority == nil ? 0 : SnapshotFormat.priorityFlag
        if let leaf = node.leaf {
            SnapshotFormat.appendTag(of: leaf, flag: flag, to: &buffer)
            if let priority { SnapshotFormat.appendLeaf(Leaf(priority), to: &buffer) }
            SnapshotFormat.appendBody(of: leaf, to: &buffer)
            return
        }
        if case .packed(let packed) = node.representation {
            // Held in memory in the snapshot's own form: copied as it is.
            buffer.append(SnapshotFormat.Tag.children.rawValue)
            SnapshotFormat.appendVarint(UInt64(packed.count), to: &buffer)
            buffer.append(contentsOf: packed.bytes)
            if buffer.count >= chunkSize { try flush(write) }
            return
        }
        let children = node.children
        guard !children.isEmpty else {
            buffer.append(SnapshotFormat.Tag.empty.rawValue)
            return
        }
        if priority == nil, children.count > SnapshotFormat.blockThreshold {
            try blocks(children, write)
            return
        }
        buffer.append(SnapshotFormat.Tag.children.rawValue | flag)
        if let priority { SnapshotFormat.appendLeaf(Leaf(priority), to: &buffer) }
        SnapshotFormat.appendVarint(UInt64(children.count), to: &buffer)
        for (key, child) in children {
            SnapshotFormat.appendBytes(key.string, to: &buffer)
            try self.node(child, write)
            if buffer.count >= chunkSize { try flush(write) }
        }
    }

    /// A big parent's children in blocks of whole pages: each block is encoded on its own (so
    /// its length can go first), then copied in.
    private mutating func blocks(_ children: ChildMap, _ write: (UnsafeRawBufferPointer) throws -> Void) throws {
        buffer.append(SnapshotFormat.Tag.blocks.rawValue)
        SnapshotFormat.appendVarint(UInt64(children.count), to: &buffer)
        var block = SnapshotEncoder(chunkSize: .max)
        var entries = 0
        func closeBlock() throws {
            var header: [UInt8] = []
            SnapshotFormat.appendVarint(UInt64(entries), to: &header)
            SnapshotFormat.appendVarint(UInt64(header.count + block.buffer.count), to: &buffer)
            buffer.append(contentsOf: header)
            buffer.append(contentsOf: block.buffer)
            block.buffer.removeAll(keepingCapacity: true)
            entries = 0
            if buffer.count >= chunkSize { try flush(write) }
        }
        for (key, child) in children {
            SnapshotFormat.appendBytes(key.string, to: &block.buffer)
            try block.node(child) { _ in preconditionFailure("Internal inconsistency: a block flushed on its own") }
            entries += 1
            if entries % OrderedMapBuilder<Key>.pageFill == 0,
                entries >= SnapshotFormat.blockEntries || block.buffer.count >= SnapshotFormat.blockBytes
            {
                try closeBlock()
            }
        }
        if entries > 0 { try closeBlock() }
        buffer.append(0)
    }

    private mutating func flush(_ write: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { try write($0) }
        written += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }
}
