/// Writes a tree in the snapshot format (see `SnapshotFormat`) in chunks, so a snapshot of any
/// size streams to its file without ever being whole in memory.
public struct SnapshotEncoder {
    private var buffer: [UInt8] = []
    private let chunkSize: Int
    private var written = 0

    private init(chunkSize: Int) {
        self.chunkSize = chunkSize
        buffer.reserveCapacity(chunkSize + 64)
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
            appendLeaf(leaf, flag: flag, priority: priority)
            return
        }
        let children = node.children
        guard !children.isEmpty else {
            buffer.append(SnapshotFormat.Tag.empty.rawValue)
            return
        }
        buffer.append(SnapshotFormat.Tag.children.rawValue | flag)
        if let priority { appendLeaf(Leaf(priority), flag: 0, priority: nil) }
        appendVarint(UInt64(children.count))
        for (key, child) in children {
            appendBytes(key.string)
            try self.node(child, write)
            if buffer.count >= chunkSize { try flush(write) }
        }
    }

    private mutating func appendLeaf(_ leaf: Leaf, flag: UInt8, priority: Priority?) {
        switch leaf {
        case .bool(let value):
            buffer.append((value ? SnapshotFormat.Tag.trueValue : .falseValue).rawValue | flag)
            if let priority { appendLeaf(Leaf(priority), flag: 0, priority: nil) }
        case .number(let number):
            let integral = number.magnitude < SnapshotFormat.integerLimit && number.rounded(.towardZero) == number
                && !(number == 0 && number.sign == .minus)
            buffer.append((integral ? SnapshotFormat.Tag.integer : .number).rawValue | flag)
            if let priority { appendLeaf(Leaf(priority), flag: 0, priority: nil) }
            if integral {
                let value = Int64(number)
                appendVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
            } else {
                withUnsafeBytes(of: number.bitPattern.littleEndian) { buffer.append(contentsOf: $0) }
            }
        case .string(let text):
            buffer.append(SnapshotFormat.Tag.string.rawValue | flag)
            if let priority { appendLeaf(Leaf(priority), flag: 0, priority: nil) }
            appendBytes(text)
        }
    }

    private mutating func appendBytes(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            appendVarint(UInt64(bytes.count))
            buffer.append(contentsOf: bytes)
        }
    }

    private mutating func appendVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            buffer.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        buffer.append(UInt8(value))
    }

    private mutating func flush(_ write: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { try write($0) }
        written += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }
}
