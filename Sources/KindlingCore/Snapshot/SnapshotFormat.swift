/// The binary form of a whole tree that snapshots hold (inside a gzip container, which the
/// server adds): typed values, length-prefixed keys and strings, exact double bits, and children
/// already in tree order, so loading one is a single pass with no parsing of text, no sorting
/// and no rounding.
///
/// ```
/// snapshot := magic "KNDLSNAP" · version (1 byte, 1) · node
/// node     := tag (1 byte; bit 0x80 set: a priority follows) · [priority] · body
/// priority := tag (number, integer or string) · body
/// tag 0 empty (only the root)      no body
/// tag 1 false, tag 2 true          no body
/// tag 3 number                     8 bytes, the IEEE-754 bits, little-endian
/// tag 4 integer                    zig-zag varint; a whole double other than -0 below 2^63
/// tag 5 string                     varint byte count · UTF-8 bytes
/// tag 6 children                   varint count · count × (varint key length · key UTF-8 · node)
/// ```
/// Varints are unsigned LEB128 (7 bits a byte, low first). Children appear in key order, each key
/// strictly after the one before, and none is empty.
enum SnapshotFormat {
    static let magic: [UInt8] = Array("KNDLSNAP".utf8)
    static let version: UInt8 = 1

    static let priorityFlag: UInt8 = 0x80

    enum Tag: UInt8 {
        case empty = 0
        case falseValue = 1
        case trueValue = 2
        case number = 3
        case integer = 4
        case string = 5
        case children = 6
    }

    /// The largest magnitude written as an integer: every whole double below it converts to
    /// Int64 and back exactly.
    static let integerLimit = 9_223_372_036_854_775_808.0
}
