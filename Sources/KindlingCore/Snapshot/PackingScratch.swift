/// The bytes of the small parent a `SnapshotDecoder` is packing, in one fixed allocation: the
/// decoder checks `roomLeft` before each key and value, so a packed parent stays within
/// `PackedLeaves.maxBytes`, the scratch never grows, and appending is a store without the checks
/// of a growable array.
struct PackingScratch: ~Copyable {
    static let capacity = PackedLeaves.maxBytes

    private let base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
    private(set) var count = 0

    deinit { base.deallocate() }

    /// Room left before the packed limit.
    var roomLeft: Int { PackedLeaves.maxBytes - count }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    /// The bytes in `range`, valid until the next change.
    func bytes(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self) + range.lowerBound, count: range.count)
    }

    mutating func removeAll() { count = 0 }

    mutating func truncate(to count: Int) { self.count = count }

    /// Appends one byte; the caller has checked the room.
    @inline(__always)
    mutating func append(_ byte: UInt8) {
        assert(count < Self.capacity, "packing past the room checked for")
        base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        assert(count + bytes.count <= Self.capacity, "packing past the room checked for")
        (base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    mutating func appendVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        append(UInt8(value))
    }

    /// Appends 8 bytes, little-endian.
    mutating func appendBits(_ bits: UInt64) {
        assert(count + 8 <= Self.capacity, "packing past the room checked for")
        (base + count).storeBytes(of: bits.littleEndian, as: UInt64.self)
        count += 8
    }
}
