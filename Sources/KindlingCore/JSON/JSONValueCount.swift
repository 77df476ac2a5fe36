/// An upper bound on how many values a JSON text holds, counted from its bytes as they arrive
/// (a piece may end anywhere, inside a string or an escape), before any of it is parsed: the
/// server weighs what parsing a request body will cost in memory before it starts.
///
/// Every value but the first follows a `:`, a `,` or a `[` outside a string, so one more than
/// the count of those never falls short for JSON text. It counts over by one for each object
/// member after the first (its comma) and each empty array: less than three times the values.
/// (Text with comments, as rules files have, can hide a quote from it: it is meant for bodies
/// the strict parser reads, which refuses anything but JSON.)
public struct JSONValueCount: Sendable {
    /// At least as many values as the text seen so far holds (none for no bytes at all).
    public private(set) var upperBound = 0
    private var inString = false
    private var escaped = false

    /// A count of nothing yet.
    public init() {}

    /// Counts the next piece of the text.
    public mutating func add(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        var count = max(upperBound, 1)
        var inString = self.inString
        var escaped = self.escaped
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
            case UInt8(ascii: ":"), UInt8(ascii: ","), UInt8(ascii: "["): count += 1
            default: break
            }
        }
        upperBound = count
        self.inString = inString
        self.escaped = escaped
    }
}
