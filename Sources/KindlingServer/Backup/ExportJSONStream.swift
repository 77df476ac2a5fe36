import KindlingCore

/// Writes a tree as export-form JSON (`.priority`, `.value`, never arrays: what
/// `Node.write(to:format: .export)` writes) a chunk at a time, so a backup holds a chunk of
/// its text, not the whole, however large the tree: a parent's children are walked one by one
/// and the text written so far goes to `sink` whenever it passes `chunkBytes`.
struct ExportJSONStream {
    private var writer = JSONWriter()
    private let chunkBytes: Int
    private let sink: (UnsafeRawBufferPointer) throws -> Void
    /// Bytes handed to `sink` so far.
    private(set) var count = 0

    init(chunkBytes: Int = 256 * 1024, sink: @escaping (UnsafeRawBufferPointer) throws -> Void) {
        self.chunkBytes = max(1, chunkBytes)
        self.sink = sink
    }

    /// Writes `node` (the whole text: call `finish` after).
    mutating func write(_ node: Node) throws {
        guard !node.isEmpty, !node.isLeaf else {
            node.write(to: &writer, format: .export)
            return
        }
        writer.writeRaw("{".utf8)
        var first = true
        for (key, child) in node.children {
            if !first { writer.writeRaw(",".utf8) }
            first = false
            writer.write(key.string)
            writer.writeRaw(":".utf8)
            try write(child)
            if writer.bytes.count >= chunkBytes { try flush() }
        }
        if let priority = node.priority {
            writer.writeRaw(",\".priority\":".utf8)
            writer.write(Leaf(priority).json)
        }
        writer.writeRaw("}".utf8)
    }

    /// Hands what is left to `sink`.
    mutating func finish() throws { try flush() }

    private mutating func flush() throws {
        guard !writer.bytes.isEmpty else { return }
        try writer.bytes.withUnsafeBytes { try sink($0) }
        count += writer.bytes.count
        writer.bytes.removeAll(keepingCapacity: true)
    }
}
