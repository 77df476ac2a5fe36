/// String order by UTF-16 code units, the order JavaScript's `<` gives and every Firebase SDK uses.
///
/// It differs from code-point (and UTF-8 byte) order only where a character above U+FFFF meets one
/// in U+E000...U+FFFF: in UTF-16 the former starts with a surrogate (0xD800...0xDBFF) and so sorts
/// first. Comparing the UTF-8 bytes and fixing up that one case keeps the common path a byte loop.
public enum UTF16Order {
    /// Returns a negative number, zero or a positive number as `lhs` sorts before, equal to or
    /// after `rhs`.
    public static func compare(_ lhs: String, _ rhs: String) -> Int {
        if let result = lhs.utf8.withContiguousStorageIfAvailable({ l in
            rhs.utf8.withContiguousStorageIfAvailable({ r in compare(l, r) })
        }), let result {
            return result
        }
        return compare(Array(lhs.utf8), Array(rhs.utf8))
    }

    /// Compares two valid UTF-8 byte sequences in UTF-16 code-unit order.
    public static func compare(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(lhs.count, rhs.count)
        var index = 0
        while index < common, lhs[index] == rhs[index] { index += 1 }
        if index == common { return lhs.count - rhs.count }
        // Step back to the first byte of the code point that differs (the prefix is shared).
        var start = index
        while start > 0, lhs[start] & 0xC0 == 0x80 { start -= 1 }
        let l = scalarValue(lhs, at: start)
        let r = scalarValue(rhs, at: start)
        if (l >= 0x10000) == (r >= 0x10000) { return l < r ? -1 : 1 }
        return utf16Rank(l) < utf16Rank(r) ? -1 : 1
    }

    static func compare(_ lhs: [UInt8], _ rhs: [UInt8]) -> Int {
        lhs.withUnsafeBufferPointer { l in rhs.withUnsafeBufferPointer { r in compare(l, r) } }
    }

    /// The first UTF-16 unit of a code point: a supplementary character leads with a high
    /// surrogate, which sorts below U+E000...U+FFFF.
    @inline(__always)
    static func utf16Rank(_ scalar: UInt32) -> UInt32 {
        scalar >= 0x10000 ? 0xD800 + ((scalar - 0x10000) >> 10) : scalar
    }

    @inline(__always)
    static func scalarValue(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt32 {
        let first = UInt32(bytes[index])
        if first < 0x80 { return first }
        func continuation(_ offset: Int) -> UInt32 {
            index + offset < bytes.count ? UInt32(bytes[index + offset] & 0x3F) : 0
        }
        if first < 0xE0 { return (first & 0x1F) << 6 | continuation(1) }
        if first < 0xF0 { return (first & 0x0F) << 12 | continuation(1) << 6 | continuation(2) }
        return (first & 0x07) << 18 | continuation(1) << 12 | continuation(2) << 6 | continuation(3)
    }
}
