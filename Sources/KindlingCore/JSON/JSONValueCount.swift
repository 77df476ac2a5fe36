/// An upper bound on how many values a JSON text holds, counted from its bytes as they arrive
/// (a piece may end anywhere, inside a string or an escape), before any of it is parsed: the
/// server weighs what parsing a request body will cost in memory before it starts.
///
/// Every value but the first is an object member's (after its `:`) or an array element (the
/// first after its `[`, the others after a `,`), so one more than the count of `:`, `[` and of
/// the `,` directly inside arrays is exact for JSON text, but for one over each empty array.
/// Telling an array's commas from an object's takes the kind of each open container: the first
/// 128 levels are kept (the parser refuses anything deeper), deeper commas all count, which only
/// over-counts. (Text with comments, as rules files have, can hide a quote from it: it is meant
/// for bodies the strict parser reads, which refuses anything but JSON.)
public struct JSONValueCount: Sendable {
    /// At least as many values as the text seen so far holds (none for no bytes at all).
    public private(set) var upperBound = 0
    private var inString = false
    private var escaped = false
    /// Open containers.
    private var depth = 0
    /// Bit `n` of word `n / 64` set: the container at depth `n + 1` is an array.
    private var arrays: (UInt64, UInt64) = (0, 0)

    /// A count of nothing yet.
    public init() {}

    /// Counts the next piece of the text.
    public mutating func add(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        var count = max(upperBound, 1)
        var inString = self.inString
        var escaped = self.escaped
        var depth = self.depth
        var arrays = self.arrays
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: ":"): count += 1
            case UInt8(ascii: ","):
                if Self.isArray(depth, arrays) { count += 1 }
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                let isArray = byte == UInt8(ascii: "[")
                if isArray { count += 1 }
                depth += 1
                Self.mark(depth, isArray: isArray, &arrays)
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                if depth > 0 { depth -= 1 }
            default: break
            }
        }
        upperBound = count
        self.inString = inString
        self.escaped = escaped
        self.depth = depth
        self.arrays = arrays
    }

    /// Whether a comma at `depth` separates array elements: true outside any container and
    /// below the levels kept (text the parser refuses), so the count never falls short.
    @inline(__always)
    private static func isArray(_ depth: Int, _ arrays: (UInt64, UInt64)) -> Bool {
        switch depth {
        case 1...64: arrays.0 & (1 << UInt64(depth - 1)) != 0
        case 65...128: arrays.1 & (1 << UInt64(depth - 65)) != 0
        default: true
        }
    }

    @inline(__always)
    private static func mark(_ depth: Int, isArray: Bool, _ arrays: inout (UInt64, UInt64)) {
        switch depth {
        case 1...64:
            let bit: UInt64 = 1 << UInt64(depth - 1)
            arrays.0 = isArray ? arrays.0 | bit : arrays.0 & ~bit
        case 65...128:
            let bit: UInt64 = 1 << UInt64(depth - 65)
            arrays.1 = isArray ? arrays.1 | bit : arrays.1 & ~bit
        default: break
        }
    }
}
