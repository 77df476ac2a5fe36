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
        var keys: [Key] = []
        // Split on the byte `/`, as the SDKs and the hosted server do: splitting the string by
        // characters ran grapheme breaking over every request's path.
        for segment in text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            let name = String(text[segment.startIndex..<segment.endIndex])
            if name == Key.priority.string {
                keys.append(.priority)
                continue
            }
            do throws(ValidationError) {
                keys.append(try Key(name))
            } catch {
                throw ValidationError(error.kind, "Invalid path \(ValidationError.quoted(text)): \(error.message)")
            }
        }
        if let index = keys.firstIndex(where: \.isPriority), index != keys.count - 1 {
            throw ValidationError(.invalidPath, "Invalid path \(ValidationError.quoted(text)): \".priority\" may only be the last key")
        }
        if keys.count > Path.maxDepth { throw .tooDeep(text) }
        self.keys = keys
    }

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
