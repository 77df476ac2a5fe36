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
        return compareDiffering(lhs[index], rhs[index])
    }

    /// Orders two strings by the first byte where their UTF-8 differs. The shared prefix ends on
    /// the same structure in both, so the bytes are either continuation bytes of code points with
    /// the same lead byte (byte order is right) or two lead bytes. Byte order is code-point order;
    /// UTF-16 differs only when a supplementary character (lead byte F0...F4) meets one in
    /// U+E000...U+FFFF (lead byte EE or EF): its surrogate sorts first.
    @inline(__always)
    static func compareDiffering(_ l: UInt8, _ r: UInt8) -> Int {
        let lSupplementary = l >= 0xF0
        let rSupplementary = r >= 0xF0
        if lSupplementary != rSupplementary, (lSupplementary ? r : l) >= 0xEE {
            return lSupplementary ? -1 : 1
        }
        return l < r ? -1 : 1
    }

    static func compare(_ lhs: [UInt8], _ rhs: [UInt8]) -> Int {
        lhs.withUnsafeBufferPointer { l in rhs.withUnsafeBufferPointer { r in compare(l, r) } }
    }
}
