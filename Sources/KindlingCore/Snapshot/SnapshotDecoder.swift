/// Reads a tree in the snapshot format (see `SnapshotFormat`) from a stream of bytes, building
/// nodes as it goes: no text is parsed, no intermediate value tree is made, and each child map is
/// built in one pass from keys that are already in order. Only one chunk of the input is held at
/// a time.
///
/// Every byte is checked: a snapshot that ends early, or holds a tag, key, order, number or
/// nesting the encoder never writes, is refused with a `SnapshotDecodingError`, never trusted.
public struct SnapshotDecoder: ~Copyable {
    /// Reads up to `buffer.count` bytes into `buffer`, returning how many (0 only at the end).
    public typealias Read = (_ buffer: UnsafeMutableRawBufferPointer) throws -> Int

    private var buffer: UnsafeMutableBufferPointer<UInt8>
    private var position = 0
    private var end = 0
    /// Bytes dropped from the front of the buffer so far, for error offsets.
    private var discarded = 0
    /// Where more bytes come from; nil when decoding a block, whose bytes are all in `buffer`
    /// (and owned by the block).
    private let read: Read?
    /// Decodes big parents' blocks elsewhere; nil to decode them here.
    private let scheduler: (any SnapshotBlockScheduler)?
    /// The entries of the small parent being packed, reused from one parent to the next.
    private var packing = PackingScratch()
    /// The format version being read (blocks exist from version 2 on).
    private var version = SnapshotFormat.version

    private init(chunkSize: Int, scheduler: (any SnapshotBlockScheduler)?, read: @escaping Read) {
        buffer = .allocate(capacity: chunkSize)
        self.read = read
        self.scheduler = scheduler
    }

    /// A decoder over a block's bytes, which it reads in place.
    private init(block: SnapshotBlock) {
        buffer = block.bytes
        end = block.bytes.count
        discarded = block.offset
        read = nil
        scheduler = nil
    }

    deinit { if read != nil { buffer.deallocate() } }

    /// Decodes the tree that `read` yields, which must be exactly one snapshot: trailing bytes
    /// are an error too. With a `scheduler`, the blocks of big parents are handed to it.
    public static func decode(
        chunkSize: Int = 1 << 20,
        scheduler: (any SnapshotBlockScheduler)? = nil,
        from read: @escaping Read
    ) throws -> Node {
        var decoder = SnapshotDecoder(chunkSize: max(chunkSize, 1024), scheduler: scheduler, read: read)
        return try decoder.snapshot()
    }

    /// Decodes the children in `block`, which must fill it exactly.
    static func decode(_ block: SnapshotBlock) throws -> SnapshotBlock.Decoded {
        var decoder = SnapshotDecoder(block: block)
        var builder = OrderedMapBuilder<Key>(expectedCount: block.count)
        for _ in 0..<block.count { try decoder.appendChild(to: &builder, depth: block.depth) }
        guard decoder.position == decoder.end else { throw decoder.failure("a block longer than its children") }
        return SnapshotBlock.Decoded(children: builder)
    }

    private mutating func snapshot() throws -> Node {
        try ensure(SnapshotFormat.magic.count + 1)
        guard buffer[0..<SnapshotFormat.magic.count].elementsEqual(SnapshotFormat.magic) else {
            throw failure("not a Kindling snapshot (no KNDLSNAP header)")
        }
        position = SnapshotFormat.magic.count
        let version = buffer[position]
        guard (SnapshotFormat.oldestVersion...SnapshotFormat.version).contains(version) else {
            throw failure(
                "snapshot format version \(version); this build reads versions \(SnapshotFormat.oldestVersion) to \(SnapshotFormat.version)"
            )
        }
        position += 1
        self.version = version
        let root = try node(depth: 0)
        guard position == end else { throw failure("bytes after the end of the tree") }
        discarded += position
        position = 0
        end = 0
        guard try fill(at: 0) == 0 else { throw failure("bytes after the end of the tree") }
        return root
    }

    private mutating func node(depth: Int) throws -> Node {
        let start = offset
        let tagByte = try byte()
        guard let tag = SnapshotFormat.Tag(rawValue: tagByte & ~SnapshotFormat.priorityFlag) else {
            throw failure("unknown node tag \(tagByte)", at: start)
        }
        let priority = tagByte & SnapshotFormat.priorityFlag == 0 ? nil : try self.priority()
        switch tag {
        case .empty:
            guard depth == 0, priority == nil else { throw failure("an empty node inside the tree", at: start) }
            return .empty
        case .falseValue: return Node(.bool(false), priority: priority)
        case .trueValue: return Node(.bool(true), priority: priority)
        case .number: return Node(.number(try number()), priority: priority)
        case .integer: return Node(.number(try integer()), priority: priority)
        case .string: return Node(.string(try string()), priority: priority)
        case .children: return try children(depth: depth, priority: priority)
        case .blocks:
            guard version >= 2 else { throw failure("children in blocks in a version \(version) snapshot", at: start) }
            guard priority == nil else { throw failure("a priority on children in blocks", at: start) }
            return try blocks(depth: depth)
        }
    }

    private mutating func children(depth: Int, priority: Priority?) throws -> Node {
        guard depth < Path.maxDepth else { throw failure("children nested deeper than \(Path.maxDepth) levels") }
        let count = try childCount()
        var builder = OrderedMapBuilder<Key>(expectedCount: Int(min(count, 1 << 20)))
        var read = 0
        if priority == nil, count <= UInt64(PackedLeaves.maxCount) {
            guard let unpacked = try packChildren(Int(count), depth: depth, into: &builder) else {
                return Node(representation: .packed(PackedLeaves.make(count: Int(count), bytes: packing.bytes)))
            }
            read = unpacked
        }
        for _ in read..<Int(count) { try appendChild(to: &builder, depth: depth) }
        return Node(map: builder.finish(), priority: priority)
    }

    /// Packs children into `packing` (copied in their encoding, checked as `node` checks them)
    /// while they are leaves without priorities with keys of valid UTF-8 and fit; returns nil when all
    /// were packed. When one does not qualify, the entries packed so far and that child go into
    /// `builder`, and it returns how many children it read (the caller reads the rest).
    private mutating func packChildren(_ count: Int, depth: Int, into builder: inout OrderedMapBuilder<Key>) throws -> Int? {
        packing.removeAll()
        var previousKey: Range<Int>?
        for index in 0..<count {
            let start = offset
            let keyBytes = try self.keyBytes()
            guard SnapshotDecoder.isValidUTF8(keyBytes), packing.roomLeft > keyBytes.count + 2 else {
                // Invalid UTF-8 goes through `Key`, which repairs it; big keys do not fit.
                let key = SnapshotDecoder.key(keyBytes)
                spill(into: &builder)
                try checkOrder(key, after: builder.lastKey, at: start)
                builder.append(key, try node(depth: depth + 1))
                return index + 1
            }
            let keyStart = packing.count
            packing.appendVarint(UInt64(keyBytes.count))
            let keyRange = packing.count..<(packing.count + keyBytes.count)
            packing.append(keyBytes)
            if let previousKey, Key.compare(utf8: packing.bytes(previousKey), packing.bytes(keyRange)) >= 0 {
                let (key, previous) = (
                    String(decoding: packing.bytes(keyRange), as: UTF8.self), String(decoding: packing.bytes(previousKey), as: UTF8.self)
                )
                throw failure("key \(key) out of order after \(previous)", at: start)
            }
            previousKey = keyRange
            let outcome = try packLeaf()
            if case .packed = outcome { continue }
            // Not packed after all: the map takes the entries so far and this child.
            let key = keyFromPacking(keyRange)
            packing.truncate(to: keyStart)
            spill(into: &builder)
            if case .tooBig(let leaf) = outcome {
                builder.append(key, Node(leaf))
            } else {
                builder.append(key, try node(depth: depth + 1))
            }
            return index + 1
        }
        return nil
    }

    /// What `packLeaf` did with the child that comes next.
    private enum PackOutcome {
        /// Packed: a leaf without a priority that fits.
        case packed
        /// Read, but too big to fit.
        case tooBig(Leaf)
        /// Not a leaf without a priority; nothing read.
        case notALeaf
    }

    private func keyFromPacking(_ range: Range<Int>) -> Key {
        let bytes = packing.bytes(range)
        return Key(string: String(decoding: bytes, as: UTF8.self), utf8: bytes)
    }

    private func checkOrder(_ key: Key, after previous: Key?, at start: Int) throws {
        if let previous, Key.compare(previous, key) >= 0 {
            throw failure("key \(key) out of order after \(previous)", at: start)
        }
    }

    /// Appends the leaf that comes next to `packing`, tag and body, when it is a leaf without a
    /// priority and fits (checked as `node` checks a leaf, written in its canonical form).
    private mutating func packLeaf() throws -> PackOutcome {
        if position == end { try ensure(1) }
        guard let tag = SnapshotFormat.Tag(rawValue: buffer[position]) else { return .notALeaf }
        switch tag {
        case .falseValue, .trueValue:
            position += 1
            packing.append(tag.rawValue)
            return .packed
        case .number, .integer:
            position += 1
            let value = tag == .number ? try number() : try integer()
            guard packing.roomLeft >= 11 else { return .tooBig(.number(value)) }
            if let integer = SnapshotFormat.integerEncoding(of: value) {
                packing.append(SnapshotFormat.Tag.integer.rawValue)
                packing.appendVarint(integer)
            } else {
                packing.append(SnapshotFormat.Tag.number.rawValue)
                packing.appendBits(value.bitPattern)
            }
            return .packed
        case .string:
            position += 1
            let count = try length(limit: Node.maxStringBytes, what: "string")
            try ensure(count)
            let bytes = UnsafeBufferPointer(rebasing: buffer[position..<(position + count)])
            position += count
            // Valid UTF-8 is copied as it stands; other bytes are decoded (repairing) and re-encoded.
            guard SnapshotDecoder.isValidUTF8(bytes) else {
                let text = String(decoding: bytes, as: UTF8.self)
                let utf8 = Array(text.utf8)
                guard packing.roomLeft >= utf8.count + 11 else { return .tooBig(.string(text)) }
                packing.append(tag.rawValue)
                packing.appendVarint(UInt64(utf8.count))
                utf8.withUnsafeBufferPointer { packing.append($0) }
                return .packed
            }
            guard packing.roomLeft >= count + 11 else { return .tooBig(.string(String(decoding: bytes, as: UTF8.self))) }
            packing.append(tag.rawValue)
            packing.appendVarint(UInt64(count))
            packing.append(bytes)
            return .packed
        case .empty, .children, .blocks:
            return .notALeaf
        }
    }

    /// True for valid UTF-8, which is copied as it is; ASCII, by far the most common, is
    /// settled without making a string.
    private static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.allSatisfy { $0 < 0x80 } || String(validating: bytes, as: UTF8.self) != nil
    }

    /// Moves the entries packed so far into `builder`.
    private mutating func spill(into builder: inout OrderedMapBuilder<Key>) {
        let bytes = packing.bytes
        var offset = 0
        while offset < bytes.count {
            let (key, node) = PackedLeaves.entry(bytes.baseAddress!, &offset)
            builder.append(key, node)
        }
        packing.removeAll()
    }

    /// Reads one child (key and node) into `builder`, checking its key's order.
    private mutating func appendChild(to builder: inout OrderedMapBuilder<Key>, depth: Int) throws {
        let start = offset
        let key = try self.key()
        if let previous = builder.lastKey, Key.compare(previous, key) >= 0 {
            throw failure("key \(key) out of order after \(previous)", at: start)
        }
        builder.append(key, try node(depth: depth + 1))
    }

    /// A big parent's children in blocks: each handed to the scheduler, or decoded here. Either
    /// way the error reported is the first damage in the file.
    private mutating func blocks(depth: Int) throws -> Node {
        guard depth < Path.maxDepth else { throw failure("children nested deeper than \(Path.maxDepth) levels") }
        let total = try childCount()
        var builder = OrderedMapBuilder<Key>(expectedCount: Int(min(total, 1 << 20)))
        var blockStarts: [Int] = []
        do {
            var seen: UInt64 = 0
            while true {
                let length = try self.length(limit: Int(Int32.max), what: "block")
                if length == 0 { break }
                let start = offset
                let count = try varint()
                guard count > 0, count <= total - seen else { throw failure("a block of \(count) more children than its parent has", at: start) }
                seen += count
                let entriesStart = offset
                let entriesLength = length - (entriesStart - start)
                guard entriesLength > 0 else { throw failure("a block too short for its children", at: start) }
                if let scheduler {
                    let bytes = try take(entriesLength)
                    try scheduler.submit(SnapshotBlock(taking: bytes, count: Int(count), depth: depth, offset: entriesStart))
                    blockStarts.append(entriesStart)
                } else {
                    for _ in 0..<count { try appendChild(to: &builder, depth: depth) }
                    guard offset - start == length else { throw failure("a block whose length is not its children's", at: start) }
                }
            }
            guard seen == total else { throw failure("blocks of \(seen) children for a parent of \(total)") }
        } catch {
            // Damage in a block handed off comes earlier in the file than this.
            if let scheduler { try join(scheduler.finish(), startingAt: blockStarts, into: &builder) }
            throw error
        }
        if let scheduler { try join(scheduler.finish(), startingAt: blockStarts, into: &builder) }
        return Node(map: builder.finish(), priority: nil)
    }

    /// Joins decoded blocks to `builder` in file order, throwing the first failure or key out
    /// of order, as decoding them here would have.
    private func join(
        _ results: [Result<SnapshotBlock.Decoded, any Error>],
        startingAt starts: [Int],
        into builder: inout OrderedMapBuilder<Key>
    ) throws {
        guard results.count == starts.count else {
            throw failure("the block scheduler returned \(results.count) of \(starts.count) blocks")
        }
        for (result, start) in zip(results, starts) {
            switch result {
            case .failure(let error): throw error
            case .success(let decoded):
                if let last = builder.lastKey, let first = decoded.children.firstKey, Key.compare(last, first) >= 0 {
                    throw failure("key \(first) out of order after \(last)", at: start)
                }
                builder.append(contentsOf: decoded.children)
            }
        }
    }

    /// Copies the next `count` bytes out of the stream into an allocation of their own, which
    /// grows as the bytes arrive: a damaged length costs no more memory than the file holds.
    private mutating func take(_ count: Int) throws -> UnsafeMutableBufferPointer<UInt8> {
        var target = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: min(count, buffer.count))
        var copied = 0
        do {
            while copied < count {
                if position == end { try ensure(1) }
                let available = min(end - position, count - copied)
                if copied + available > target.count {
                    let larger = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: min(count, max(2 * target.count, copied + available)))
                    _ = larger.initialize(fromContentsOf: target[..<copied])
                    target.deallocate()
                    target = larger
                }
                _ = UnsafeMutableBufferPointer(rebasing: target[copied..<(copied + available)])
                    .initialize(fromContentsOf: buffer[position..<(position + available)])
                position += available
                copied += available
            }
        } catch {
            target.deallocate()
            throw error
        }
        return target
    }

    private mutating func priority() throws -> Priority {
        let start = offset
        switch SnapshotFormat.Tag(rawValue: try byte()) {
        case .number: return .number(try number())
        case .integer: return .number(try integer())
        case .string: return .string(try string())
        default: throw failure("a priority that is not a number or a string", at: start)
        }
    }

    private mutating func number() throws -> Double {
        try ensure(8)
        var bits: UInt64 = 0
        for index in 0..<8 { bits |= UInt64(buffer[position + index]) << (8 * UInt64(index)) }
        let value = Double(bitPattern: bits)
        guard value.isFinite else { throw failure("a number that is not finite") }
        position += 8
        return value
    }

    private mutating func integer() throws -> Double {
        let zigzag = try varint()
        let value = Int64(bitPattern: (zigzag >> 1) ^ (0 &- (zigzag & 1)))
        return Double(value)
    }

    private mutating func string() throws -> String {
        let count = try length(limit: Node.maxStringBytes, what: "string")
        try ensure(count)
        defer { position += count }
        return String(decoding: UnsafeBufferPointer(rebasing: buffer[position..<(position + count)]), as: UTF8.self)
    }

    private mutating func key() throws -> Key {
        SnapshotDecoder.key(try keyBytes())
    }

    /// The key `bytes` name: bytes that are not UTF-8 read as the text they repair to (with
    /// U+FFFD), whose own bytes the key then compares by.
    private static func key(_ bytes: UnsafeBufferPointer<UInt8>) -> Key {
        let text = String(decoding: bytes, as: UTF8.self)
        return isValidUTF8(bytes) ? Key(string: text, utf8: bytes) : Key(unchecked: text)
    }

    /// A key's bytes, checked (length, no forbidden character), in the buffer: valid until the
    /// next read.
    private mutating func keyBytes() throws -> UnsafeBufferPointer<UInt8> {
        let count = try length(limit: Key.maxByteCount, what: "key")
        guard count > 0 else { throw failure("an empty key") }
        try ensure(count)
        let bytes = UnsafeBufferPointer(rebasing: buffer[position..<(position + count)])
        guard !bytes.contains(where: Key.isForbidden) else { throw failure("a key with a forbidden character") }
        position += count
        return bytes
    }

    private mutating func length(limit: Int, what: String) throws -> Int {
        let value = try varint()
        guard value <= UInt64(limit) else { throw failure("a \(what) of \(value) bytes (the limit is \(limit))") }
        return Int(value)
    }

    @inline(__always)
    private mutating func byte() throws -> UInt8 {
        if position == end { try ensure(1) }
        defer { position += 1 }
        return buffer[position]
    }

    /// A parent's number of children: at least one, and at most 2^40 (far past any tree that
    /// fits in memory), so a damaged count is refused here rather than trapping as an `Int`.
    private mutating func childCount() throws -> UInt64 {
        let count = try varint()
        guard count > 0 else { throw failure("a parent with no children") }
        guard count <= 1 << 40 else { throw failure("a parent of \(count) children") }
        return count
    }

    @inline(__always)
    private mutating func varint() throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try self.byte()
            guard shift < 64 else { throw failure("a varint longer than 64 bits") }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    private var offset: Int { discarded + position }

    /// Makes at least `count` bytes available from `position`, reading more (and moving or
    /// growing the buffer) when needed.
    private mutating func ensure(_ count: Int) throws {
        guard end - position < count else { return }
        // A block's bytes are all there is: needing more means its children overrun it.
        guard read != nil else { throw failure("a block shorter than its children", at: discarded + end) }
        let kept = end - position
        if count > buffer.count {
            let larger = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: count)
            _ = larger.initialize(fromContentsOf: buffer[position..<end])
            buffer.deallocate()
            buffer = larger
        } else if position > 0 {
            buffer.baseAddress!.update(from: buffer.baseAddress! + position, count: kept)
        }
        discarded += position
        position = 0
        end = kept
        while end < count {
            let added = try fill(at: end)
            guard added > 0 else { throw failure("the snapshot ends early", at: discarded + end) }
            end += added
        }
    }

    private mutating func fill(at index: Int) throws -> Int {
        guard let read else { return 0 }
        return try read(UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[index...])))
    }

    private func failure(_ reason: String, at offset: Int? = nil) -> SnapshotDecodingError {
        SnapshotDecodingError(offset: offset ?? self.offset, reason: reason)
    }
}
