/// The binary form of a whole tree that snapshots hold (inside a gzip container, which the
/// server adds): typed values, length-prefixed keys and strings, exact double bits, and children
/// already in tree order, so loading one is a single pass with no parsing of text, no sorting
/// and no rounding.
///
/// ```
/// snapshot := magic "KNDLSNAP" · version (1 byte, 2; version 1 lacks tag 7) · node
/// node     := tag (1 byte; bit 0x80 set: a priority follows) · [priority] · body
/// priority := tag (number, integer or string) · body
/// tag 0 empty (only the root)      no body
/// tag 1 false, tag 2 true          no body
/// tag 3 number                     8 bytes, the IEEE-754 bits, little-endian
/// tag 4 integer                    zig-zag varint; a whole double other than -0 below 2^63
/// tag 5 string                     varint byte count · UTF-8 bytes
/// tag 6 children                   varint count · count × entry
/// tag 7 children in blocks         varint count · block… · 0
///   block := varint byte length (> 0) · varint entry count (> 0) · entries
///   entry := varint key length · key UTF-8 · node
/// ```
/// Varints are unsigned LEB128 (7 bits a byte, low first). Children appear in key order, each key
/// strictly after the one before (across blocks too), and none is empty. A parent of more than
/// `blockThreshold` children is written in blocks (with no priority: a priority goes with tag 6),
/// each of a whole number of B+tree pages' worth of entries and about `blockBytes` long, so a
/// reader can hand the blocks of a big parent (a list of millions of users) to other cores.
///
/// The children of a `PackedLeaves` node are held in memory in exactly this form (key, then a
/// leaf's tag and body), so loading one from a snapshot is a copy and writing one is too.
enum SnapshotFormat {
    static let magic: [UInt8] = Array("KNDLSNAP".utf8)
    static let version: UInt8 = 2
    /// The oldest version this build still reads.
    static let oldestVersion: UInt8 = 1

    static let priorityFlag: UInt8 = 0x80

    enum Tag: UInt8 {
        case empty = 0
        case falseValue = 1
        case trueValue = 2
        case number = 3
        case integer = 4
        case string = 5
        case children = 6
        case blocks = 7
    }

    /// Parents with more children than this are written in blocks.
    static let blockThreshold = 4 * OrderedMapBuilder<Key>.pageFill
    /// A block closes at a page boundary once it holds this many bytes, or `blockEntries`.
    static let blockBytes = 1 << 20
    static let blockEntries = 256 * OrderedMapBuilder<Key>.pageFill

    /// The largest magnitude written as an integer: every whole double below it converts to
    /// Int64 and back exactly.
    static let integerLimit = 9_223_372_036_854_775_808.0

    /// Appends a leaf's tag and body (a leaf without a priority).
    static func appendLeaf(_ leaf: Leaf, to buffer: inout [UInt8]) {
        appendTag(of: leaf, flag: 0, to: &buffer)
        appendBody(of: leaf, to: &buffer)
    }

    /// Appends a leaf's tag, with `flag` or'ed in (a priority goes between tag and body).
    static func appendTag(of leaf: Leaf, flag: UInt8, to buffer: inout [UInt8]) {
        let tag: Tag
        switch leaf {
        case .bool(let value): tag = value ? .trueValue : .falseValue
        case .number(let number): tag = isIntegral(number) ? .integer : .number
        case .string: tag = .string
        }
        buffer.append(tag.rawValue | flag)
    }

    /// Appends a leaf's body: nothing for a boolean.
    static func appendBody(of leaf: Leaf, to buffer: inout [UInt8]) {
        switch leaf {
        case .bool: return
        case .number(let number):
            if let integer = integerEncoding(of: number) {
                appendVarint(integer, to: &buffer)
            } else {
                withUnsafeBytes(of: number.bitPattern.littleEndian) { buffer.append(contentsOf: $0) }
            }
        case .string(let text):
            appendBytes(text, to: &buffer)
        }
    }

    /// True for a number written as a (shorter) integer.
    private static func isIntegral(_ number: Double) -> Bool {
        number.magnitude < integerLimit && number.rounded(.towardZero) == number && !(number == 0 && number.sign == .minus)
    }

    /// The zig-zag value a number is written as with tag 4, or nil when it is written with tag 3.
    static func integerEncoding(of number: Double) -> UInt64? {
        guard isIntegral(number) else { return nil }
        let value = Int64(number)
        return UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    /// Appends a string's UTF-8 byte count and bytes.
    static func appendBytes(_ text: String, to buffer: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            appendVarint(UInt64(bytes.count), to: &buffer)
            buffer.append(contentsOf: bytes)
        }
    }

    static func appendVarint(_ value: UInt64, to buffer: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            buffer.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        buffer.append(UInt8(value))
    }

    /// Reads a varint from bytes already checked (a packed node's), advancing `offset`.
    @inline(__always)
    static func readVarint(_ bytes: UnsafeRawPointer, _ offset: inout Int) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = bytes.load(fromByteOffset: offset, as: UInt8.self)
            offset += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    /// Reads a leaf's tag and body from bytes already checked, advancing `offset`.
    static func readLeaf(_ bytes: UnsafeRawPointer, _ offset: inout Int) -> Leaf {
        let tag = bytes.load(fromByteOffset: offset, as: UInt8.self)
        offset += 1
        switch Tag(rawValue: tag) {
        case .falseValue: return .bool(false)
        case .trueValue: return .bool(true)
        case .number:
            defer { offset += 8 }
            return .number(Double(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))))
        case .integer: return .number(integer(fromZigZag: readVarint(bytes, &offset)))
        case .string:
            let count = Int(readVarint(bytes, &offset))
            defer { offset += count }
            return .string(String(decoding: UnsafeRawBufferPointer(start: bytes + offset, count: count), as: UTF8.self))
        default: preconditionFailure("Internal inconsistency: a packed leaf with tag \(tag)")
        }
    }

    static func integer(fromZigZag zigzag: UInt64) -> Double {
        Double(Int64(bitPattern: (zigzag >> 1) ^ (0 &- (zigzag & 1))))
    }
}
