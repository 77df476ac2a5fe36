import Synchronization

/// A parent whose children are a few leaves without priorities, such as a user's name, email,
/// score and online flag, packed into one allocation.
///
/// Most parents of a large tree are records like that, and as separate objects (a node storage,
/// a B+tree page, a heap string for each text over 15 bytes) one costs several times its JSON
/// size. Packed, the children are their snapshot encoding (`SnapshotFormat`: key length, key,
/// leaf tag, body, in key order) after a small header, so loading a snapshot copies them and
/// writing one copies them back.
///
/// A packed node never changes: setting or removing a field makes a new one (`setting`), and a
/// deeper or prioritised write turns it into an ordinary parent (`Node.uniqueStorage`), so
/// copies held by snapshots are never touched. Reads decode on the way: a lookup scans the keys' bytes, and iterating
/// builds each `Key` and `Leaf`. Its digests are cached in a slot ahead of the entries, filled
/// at most once (the first store wins), from any thread.
final class PackedLeaves: ManagedBuffer<PackedLeavesHeader, UInt64> {
    /// At most this many children are packed: a lookup scans them in order.
    static let maxCount = 16
    /// At most this many bytes of entries are packed, so a scan stays within a few cache lines.
    static let maxBytes = 1024

    private typealias HashSlot = Atomic<Unmanaged<NodeHashBox>?>

    deinit {
        hashSlot.pointee.load(ordering: .acquiring)?.release()
    }

    /// A packed node holding `count` entries whose encoding is `bytes`, which the caller has
    /// checked (keys valid and ascending, leaves well formed, strings UTF-8).
    static func make(count: Int, bytes: UnsafeRawBufferPointer) -> PackedLeaves {
        let words = 1 + (bytes.count + 7) / 8
        let buffer = create(minimumCapacity: words) { _ in
            PackedLeavesHeader(count: UInt32(count), byteCount: UInt32(bytes.count))
        }
        let packed = unsafeDowncast(buffer, to: PackedLeaves.self)
        packed.hashSlot.initialize(to: HashSlot(nil))
        if let source = bytes.baseAddress {
            packed.start.copyMemory(from: source, byteCount: bytes.count)
        }
        return packed
    }

    /// Packs `entries`, which are in strictly ascending key order (empty nodes are left out); nil
    /// when they do not qualify (too many or too large, or a child that is not a leaf without a
    /// priority).
    static func pack(_ entries: some Sequence<(key: Key, node: Node)>) -> PackedLeaves? {
        var bytes: [UInt8] = []
        var count = 0
        for (key, node) in entries {
            if node.isEmpty { continue }
            guard case .leaf(let leaf) = node.representation, count < maxCount else { return nil }
            SnapshotFormat.appendBytes(key.string, to: &bytes)
            SnapshotFormat.appendLeaf(leaf, to: &bytes)
            guard bytes.count <= maxBytes else { return nil }
            count += 1
        }
        guard count > 0 else { return nil }
        return bytes.withUnsafeBytes { make(count: count, bytes: $0) }
    }

    private var fields: UnsafeMutablePointer<PackedLeavesHeader> { withUnsafeMutablePointerToHeader { $0 } }

    private var hashSlot: UnsafeMutablePointer<HashSlot> {
        withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0).assumingMemoryBound(to: HashSlot.self) }
    }

    /// Where the entries start, after the hash slot.
    private var start: UnsafeMutableRawPointer { withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0 + 1) } }

    var count: Int { Int(fields.pointee.count) }

    /// The entries in the snapshot encoding, valid as long as this node lives.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: start, count: Int(fields.pointee.byteCount)) }

    /// The child named `key`, if present: a scan comparing bytes (key equality is byte equality).
    func child(_ key: Key) -> Node? {
        var text = key.string
        return text.withUTF8 { target -> Node? in
            let bytes = UnsafeRawPointer(start)
            let end = Int(fields.pointee.byteCount)
            var offset = 0
            while offset < end {
                let length = Int(SnapshotFormat.readVarint(bytes, &offset))
                let matches =
                    length == target.count
                    && UnsafeRawBufferPointer(start: bytes + offset, count: length).elementsEqual(UnsafeRawBufferPointer(target))
                offset += length
                if matches { return Node(SnapshotFormat.readLeaf(bytes, &offset)) }
                PackedLeaves.skipLeaf(bytes, &offset)
            }
            return nil
        }
    }

    /// Steps over a leaf's tag and body.
    private static func skipLeaf(_ bytes: UnsafeRawPointer, _ offset: inout Int) {
        let tag = bytes.load(fromByteOffset: offset, as: UInt8.self)
        offset += 1
        switch SnapshotFormat.Tag(rawValue: tag) {
        case .number: offset += 8
        case .integer: _ = SnapshotFormat.readVarint(bytes, &offset)
        case .string: offset += Int(SnapshotFormat.readVarint(bytes, &offset))
        default: break
        }
    }

    /// This parent with child `key` set to `node`, still packed, so that writing a record's
    /// fields keeps it compact: the result shares nothing with this one (which never changes),
    /// and is `.empty` when the last child goes. Nil when the write is not a leaf without a
    /// priority (or a removal), or when the result would be too big to pack.
    func setting(_ key: Key, to node: Node) -> Node? {
        let leaf: Leaf?
        switch node.representation {
        case .empty: leaf = nil
        case .leaf(let value): leaf = value
        case .shared, .packed: return nil
        }
        var text = key.string
        return text.withUTF8 { target -> Node? in
            // Find the entry for `key`, or where it goes: entries are in key order.
            let bytes = self.bytes
            let base = bytes.baseAddress!
            var entryStart = 0
            var entryEnd = 0
            var found = false
            while entryStart < bytes.count {
                var offset = entryStart
                let length = Int(SnapshotFormat.readVarint(base, &offset))
                let order = Key.compare(utf8: UnsafeBufferPointer(start: (base + offset).assumingMemoryBound(to: UInt8.self), count: length), target)
                offset += length
                PackedLeaves.skipLeaf(base, &offset)
                if order == 0 { found = true }
                if order >= 0 {
                    entryEnd = found ? offset : entryStart
                    break
                }
                entryStart = offset
            }
            if entryStart == bytes.count { entryEnd = entryStart }
            var newCount = count - (found ? 1 : 0)
            var entry: [UInt8] = []
            if let leaf {
                SnapshotFormat.appendBytes(key.string, to: &entry)
                SnapshotFormat.appendLeaf(leaf, to: &entry)
                newCount += 1
            } else if !found {
                return Node(representation: .packed(self))
            }
            if newCount == 0 { return .empty }
            let newByteCount = bytes.count - (entryEnd - entryStart) + entry.count
            guard newCount <= PackedLeaves.maxCount, newByteCount <= PackedLeaves.maxBytes else { return nil }
            var combined: [UInt8] = []
            combined.reserveCapacity(newByteCount)
            combined.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[..<entryStart]))
            combined.append(contentsOf: entry)
            combined.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[entryEnd...]))
            return Node(representation: .packed(combined.withUnsafeBytes { PackedLeaves.make(count: newCount, bytes: $0) }))
        }
    }

    /// The children as an ordinary child map, for callers that need one, and for a write.
    func childMap() -> ChildMap {
        var builder = OrderedMapBuilder<Key>(expectedCount: count)
        for (key, node) in self { builder.append(key, node) }
        return builder.finish()
    }

    /// True when both hold the same children: the encoding is canonical, so equal bytes.
    func hasSameEntries(as other: PackedLeaves) -> Bool {
        self === other || (count == other.count && bytes.elementsEqual(other.bytes))
    }

    /// The cached digests, if this node was hashed.
    var cachedHash: NodeHashSummary? {
        hashSlot.pointee.load(ordering: .acquiring)?.takeUnretainedValue().summary
    }

    /// Caches `summary`; when two threads hash the node at once, the first to store wins.
    func cacheHash(_ summary: NodeHashSummary) {
        let box = Unmanaged.passRetained(NodeHashBox(summary))
        if !hashSlot.pointee.compareExchange(expected: nil, desired: box, ordering: .acquiringAndReleasing).exchanged {
            box.release()
        }
    }
}

extension PackedLeaves: Sequence {
    /// Walks the children in key order, decoding each.
    struct Iterator: IteratorProtocol {
        // Holds the node, so its bytes stay valid.
        private let packed: PackedLeaves
        private var offset = 0

        init(_ packed: PackedLeaves) { self.packed = packed }

        mutating func next() -> (key: Key, node: Node)? {
            let bytes = packed.bytes
            guard offset < bytes.count, let base = bytes.baseAddress else { return nil }
            return PackedLeaves.entry(base, &offset)
        }
    }

    /// Decodes the entry at `offset` of packed bytes, advancing `offset` past it.
    static func entry(_ bytes: UnsafeRawPointer, _ offset: inout Int) -> (key: Key, node: Node) {
        let length = Int(SnapshotFormat.readVarint(bytes, &offset))
        let keyBytes = UnsafeBufferPointer(start: (bytes + offset).assumingMemoryBound(to: UInt8.self), count: length)
        let key = Key(string: String(decoding: keyBytes, as: UTF8.self), utf8: keyBytes)
        offset += length
        return (key, Node(SnapshotFormat.readLeaf(bytes, &offset)))
    }

    func makeIterator() -> Iterator { Iterator(self) }

    var underestimatedCount: Int { count }
}
