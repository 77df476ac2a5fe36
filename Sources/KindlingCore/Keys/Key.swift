/// One segment of a path: the name of a child in the tree.
///
/// Firebase clients compare keys by their exact characters, never by Unicode canonical
/// equivalence, so `Key` compares and hashes the UTF-8 bytes (`"é"` and `"e\u{301}"` are two
/// different keys). Keys are ordered the way every SDK orders children: keys that read as 32-bit
/// integers first, numerically, then all others by UTF-16 code units.
public struct Key: Sendable, CustomStringConvertible {
    /// The key as given.
    public let string: String
    /// The first eight UTF-8 bytes, big-endian and zero-padded, and the byte count: most
    /// comparisons and inequalities are settled by these without touching the string.
    let prefix: UInt64
    /// The integer reading (meaningful when `isInteger`), stored apart from its flag so that a
    /// key takes 32 bytes, not 40: every child entry of the tree holds one.
    private let integer: Int32
    let byteCount: UInt16
    private let isInteger: Bool

    /// The key's value when it reads as a 32-bit integer (`-?0*\d{1,10}` within Int32), which
    /// puts it ahead of every non-integer key.
    public var integerValue: Int32? { isInteger ? integer : nil }

    /// The most UTF-8 bytes a key may have.
    public static let maxByteCount = 768

    /// The pseudo-key that addresses a node's priority (`a/.priority`).
    public static let priority = Key(unchecked: ".priority")

    /// Validates `string` as a key that may be stored in the tree.
    public init(_ string: String) throws(ValidationError) {
        try Key.validate(string)
        self.init(unchecked: string)
    }

    /// Builds a key without validation, for names that are known to be valid (push ids, array
    /// indexes, `.priority`).
    init(unchecked string: String) {
        var text = string
        self = text.withUTF8 { Key(string: string, utf8: $0) }
    }

    /// Builds a key from `string` and its UTF-8 bytes, known to be valid: the cached prefix, count
    /// and integer reading come from the bytes, never from walking the string again.
    init(string: String, utf8: UnsafeBufferPointer<UInt8>) {
        self.string = string
        let integer = Key.parseInteger(utf8)
        self.integer = integer ?? 0
        self.isInteger = integer != nil
        var prefix: UInt64 = 0
        for index in 0..<min(utf8.count, 8) { prefix |= UInt64(utf8[index]) << (56 - 8 * UInt64(index)) }
        self.prefix = prefix
        // Keys are checked against `maxByteCount` (768), so the count fits; longer unchecked
        // names (never stored) saturate, and fall back to comparing the text.
        self.byteCount = UInt16(min(utf8.count, Int(UInt16.max)))
    }

    public var description: String { string }

    /// True for the `.priority` pseudo-key.
    public var isPriority: Bool { self == Key.priority }

    /// Appends the key's UTF-8 to `bytes` when it is at most eight bytes long and needs no
    /// escaping in a JSON string (no `"`, `\` or control byte), read from `prefix` without
    /// touching the string; false, appending nothing, otherwise. Most keys of a path are short,
    /// and every log record and event writes its path (`JSONWriter.write(relativePath:)`).
    func appendShortPlain(to bytes: inout [UInt8]) -> Bool {
        let count = Int(byteCount)
        guard count <= 8 else { return false }
        return withUnsafeBytes(of: prefix.bigEndian) { raw in
            let key = UnsafeRawBufferPointer(rebasing: raw[..<count])
            for byte in key where byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { return false }
            bytes.append(contentsOf: key)
            return true
        }
    }

    /// Checks the Firebase key rules: non-empty, at most 768 bytes of UTF-8, none of `. $ # [ ] /`
    /// and no ASCII control characters.
    static func validate(_ string: String) throws(ValidationError) {
        var count = 0
        for byte in string.utf8 {
            count += 1
            if Key.isForbidden(byte) { throw .invalidKey(string) }
        }
        if count == 0 { throw .invalidKey(string) }
        if count > Key.maxByteCount { throw .keyTooLong(string) }
    }

    @inline(__always)
    static func isForbidden(_ byte: UInt8) -> Bool {
        switch byte {
        case 0...31, 127: return true
        case UInt8(ascii: "."), UInt8(ascii: "$"), UInt8(ascii: "#"), UInt8(ascii: "["), UInt8(ascii: "]"),
            UInt8(ascii: "/"):
            return true
        default: return false
        }
    }

    /// The integer reading the SDKs use: an optional `-`, any leading zeros, then 1 to 10 digits,
    /// inside the Int32 range.
    static func parseInteger(_ string: String) -> Int32? {
        var text = string
        return text.withUTF8 { parseInteger($0) }
    }

    static func parseInteger(_ utf8: UnsafeBufferPointer<UInt8>) -> Int32? {
        var index = 0
        var negative = false
        if utf8.first == UInt8(ascii: "-") {
            negative = true
            index = 1
        }
        while utf8.count - index > 1, utf8[index] == UInt8(ascii: "0") { index += 1 }
        guard index < utf8.count, utf8.count - index <= 10 else { return nil }
        var value: Int64 = 0
        for byte in utf8[index...] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        if negative { value = -value }
        guard value >= Int64(Int32.min), value <= Int64(Int32.max) else { return nil }
        return Int32(value)
    }
}

extension Key: Hashable {
    public static func == (lhs: Key, rhs: Key) -> Bool {
        lhs.prefix == rhs.prefix && lhs.byteCount == rhs.byteCount
            && (lhs.byteCount <= 8 || lhs.string.utf8.elementsEqual(rhs.string.utf8))
    }

    public func hash(into hasher: inout Hasher) {
        var copy = string
        copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

extension Key: Comparable, OrderedKey {
    public static func < (lhs: Key, rhs: Key) -> Bool { compare(lhs, rhs) < 0 }

    /// The SDKs' `nameCompare`: integer keys first and numerically (equal numbers put the shorter
    /// text first), then UTF-16 code-unit order.
    @inline(__always)
    public static func compare(_ lhs: Key, _ rhs: Key) -> Int {
        switch (lhs.integerValue, rhs.integerValue) {
        case let (l?, r?):
            if l != r { return l < r ? -1 : 1 }
            let difference = Int(lhs.byteCount) - Int(rhs.byteCount)
            return difference == 0 ? compareText(lhs, rhs) : difference
        case (.some, nil): return -1
        case (nil, .some): return 1
        case (nil, nil): return compareText(lhs, rhs)
        }
    }

    /// `compare` on two keys' UTF-8 bytes, for a reader that checks their order before making
    /// `Key`s of them.
    static func compare(utf8 lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Int {
        switch (parseInteger(lhs), parseInteger(rhs)) {
        case let (l?, r?):
            if l != r { return l < r ? -1 : 1 }
            let difference = lhs.count - rhs.count
            return difference == 0 ? UTF16Order.compare(lhs, rhs) : difference
        case (.some, nil): return -1
        case (nil, .some): return 1
        case (nil, nil): return UTF16Order.compare(lhs, rhs)
        }
    }

    /// UTF-16 order, settled from the cached prefixes when they differ (keys never contain a
    /// zero byte, so the zero padding sorts a shorter key first, as it should).
    @inline(__always)
    static func compareText(_ lhs: Key, _ rhs: Key) -> Int {
        let difference = lhs.prefix ^ rhs.prefix
        if difference != 0 {
            let shift = UInt64(56 - (difference.leadingZeroBitCount / 8) * 8)
            return UTF16Order.compareDiffering(UInt8(truncatingIfNeeded: lhs.prefix >> shift), UInt8(truncatingIfNeeded: rhs.prefix >> shift))
        }
        if lhs.byteCount <= 8 || rhs.byteCount <= 8 { return Int(lhs.byteCount) - Int(rhs.byteCount) }
        return UTF16Order.compare(lhs.string, rhs.string)
    }
}

extension Key: ExpressibleByStringLiteral {
    /// Literal keys are for tests and fixed names; an invalid literal is a programming error.
    public init(stringLiteral value: String) {
        do { try self.init(value) } catch { preconditionFailure("invalid key literal \(value): \(error)") }
    }
}
