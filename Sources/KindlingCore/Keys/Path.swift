/// A location in the tree: a list of keys from the root.
///
/// Parsing normalises the text the clients send: empty segments vanish, so `/a//b/` is `a/b` and
/// both `""` and `"/"` are the root. The last key may be `.priority`, which addresses the priority
/// of the node above it.
public struct Path: Hashable, Sendable, CustomStringConvertible {
    /// The keys, root first.
    public private(set) var keys: [Key]

    /// The deepest a path may go: 32 keys, as the SDKs allow.
    public static let maxDepth = 32

    /// The root.
    public static let root = Path(keys: [])

    public init(keys: [Key]) { self.keys = keys }

    /// Parses and validates `/`-separated path text.
    public init(_ text: String) throws(ValidationError) {
        var utf8 = text
        let keys: Result<[Key], ValidationError> = utf8.withUTF8 { bytes in
            Result { () throws(ValidationError) in try Path.keys(bytes) }
        }
        self.keys = try keys.get()
    }

    /// Parses and validates `/`-separated path text given as its UTF-8 bytes, which must be
    /// valid UTF-8 (a request reader's, which has checked them): no `String` of the whole path
    /// is made, since a request's path is parsed on every write. Package-only: the bytes are
    /// not checked to be UTF-8, so only this package's readers, which check them, may call it.
    package init(utf8 bytes: UnsafeBufferPointer<UInt8>) throws(ValidationError) {
        self.keys = try Path.keys(bytes)
    }

    /// The keys of the path whose UTF-8 is `bytes`, read in one pass: split on the byte `/`, as the
    /// SDKs and the hosted server do, each segment checked and made a `Key` from its own bytes
    /// (a request's path is parsed on every write, so no substring or generic split is made).
    private static func keys(_ bytes: UnsafeBufferPointer<UInt8>) throws(ValidationError) -> [Key] {
        let slash = UInt8(ascii: "/")
        var slashes = 0
        for byte in bytes where byte == slash { slashes += 1 }
        var keys: [Key] = []
        keys.reserveCapacity(min(slashes + 1, Path.maxDepth + 1))
        var start = 0
        // Whether the last key read is `.priority`, and whether one came before another key:
        // known as the keys are made (a look through them afterwards, with `isPriority`, cost
        // more than the split).
        var lastIsPriority = false
        var priorityNotLast = false
        while start < bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != slash { end += 1 }
            if end > start {
                keys.append(try key(UnsafeBufferPointer(rebasing: bytes[start..<end]), of: bytes))
                if lastIsPriority { priorityNotLast = true }
                // `key` refuses every other segment that starts with `.`.
                lastIsPriority = bytes[start] == UInt8(ascii: ".")
            }
            start = end + 1
        }
        if priorityNotLast {
            throw ValidationError(.invalidPath, "Invalid path \(ValidationError.quoted(text(bytes))): \".priority\" may only be the last key")
        }
        if keys.count > Path.maxDepth { throw .tooDeep(text(bytes)) }
        return keys
    }

    /// One non-empty segment of the path `whole` as a key: `.priority`, or a name the key rules allow.
    private static func key(_ segment: UnsafeBufferPointer<UInt8>, of whole: UnsafeBufferPointer<UInt8>) throws(ValidationError) -> Key {
        // Any other segment starting with `.` is refused below, so the first byte and the count
        // settle nearly every segment without comparing the text.
        if segment.count == 9, segment[0] == UInt8(ascii: "."), segment.elementsEqual(Key.priority.string.utf8) { return .priority }
        // The segment is whole UTF-8 (the text is, and `/` is one byte), so decoding cannot repair.
        let name = String(decoding: segment, as: UTF8.self)
        var problem: ValidationError?
        if segment.contains(where: Key.isForbidden) {
            problem = .invalidKey(name)
        } else if segment.count > Key.maxByteCount {
            problem = .keyTooLong(name)
        }
        if let problem { throw ValidationError(problem.kind, "Invalid path \(ValidationError.quoted(text(whole))): \(problem.message)") }
        return Key(string: name, utf8: segment)
    }

    /// The path's text, for a refusal's message (made only when one is thrown).
    private static func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    public var isRoot: Bool { keys.isEmpty }
    public var count: Int { keys.count }
    public var first: Key? { keys.first }
    public var last: Key? { keys.last }

    /// The path without its last key; the root's parent is nil.
    public var parent: Path? { keys.isEmpty ? nil : Path(keys: Array(keys.dropLast())) }

    /// This path with `key` appended.
    public func child(_ key: Key) -> Path {
        var copy = self
        copy.keys.append(key)
        return copy
    }

    /// This path followed by `other`.
    public func appending(_ other: Path) -> Path {
        var copy = self
        copy.keys.append(contentsOf: other.keys)
        return copy
    }

    /// The path without its first `count` keys.
    public func dropFirst(_ count: Int = 1) -> Path { Path(keys: Array(keys.dropFirst(count))) }

    /// True when `self` is `other` or lies above it.
    public func contains(_ other: Path) -> Bool {
        keys.count <= other.keys.count && zip(keys, other.keys).allSatisfy { $0 == $1 }
    }

    /// `other` relative to `self`, or nil when `other` is not at or below `self`.
    public func relative(_ other: Path) -> Path? {
        contains(other) ? other.dropFirst(keys.count) : nil
    }

    /// The path as clients write it, with a leading `/` (`/` for the root).
    public var description: String { "/" + keys.map(\.string).joined(separator: "/") }

    /// The path without a leading slash, as the server's pushes carry it.
    public var relativeString: String { keys.map(\.string).joined(separator: "/") }
}

extension Path: Comparable {
    /// Orders paths key by key (a parent before its children), for sorting update paths.
    public static func < (lhs: Path, rhs: Path) -> Bool {
        for (l, r) in zip(lhs.keys, rhs.keys) {
            let order = Key.compare(l, r)
            if order != 0 { return order < 0 }
        }
        return lhs.keys.count < rhs.keys.count
    }
}
