/// Finds where a run of string bytes that JSON takes as they are ends: the first quote,
/// backslash or control character (below 0x20), eight bytes at a time.
///
/// Both the parser (reading a string literal) and the writer (escaping one) stop only at those
/// bytes; a value of a hundred plain bytes was a hundred compare-and-branch steps on every
/// write's way in and again on its way to the log, a measurable part of a write's CPU
/// (BENCHMARKS.md, issue 40). The word test may flag a word that holds none of the bytes (a
/// borrow from a byte that does is the only way), never miss one: a flagged word is then read
/// byte by byte.
enum JSONStringScan {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// Where the plain run from `start` ends: the index of the first `"`, `\` or byte below
    /// 0x20 at or after it (`bytes.count` when there is none), and whether the run is ASCII.
    static func plainRun(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> (end: Int, isASCII: Bool) {
        guard let base = bytes.baseAddress else { return (start, true) }
        var index = start
        var high: UInt64 = 0
        while bytes.count - index >= 8 {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            guard !mayStop(word) else { break }
            high |= word
            index += 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            high |= UInt64(byte)
            index += 1
        }
        return (index, high & highBits == 0)
    }

    /// True when `word` may hold a quote, a backslash or a control byte (never false when it does).
    private static func mayStop(_ word: UInt64) -> Bool {
        let quotes = hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\""))))
        let backslashes = hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
        // A byte below 0x20 borrows in the subtraction and has its top bit clear.
        let controls = (word &- ones &* 0x20) & ~word & highBits
        return quotes | backslashes | controls != 0
    }

    private static func hasZeroByte(_ word: UInt64) -> UInt64 { (word &- ones) & ~word & highBits }
}
