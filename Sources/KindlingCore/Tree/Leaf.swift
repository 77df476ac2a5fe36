/// A primitive value stored at a leaf of the tree.
///
/// Numbers are doubles, as in every Firebase SDK: integers are exact up to 2^53, and a double
/// keeps its exact bits (negative zero included) from the wire to storage and back.
public enum Leaf: Sendable, Hashable, CustomStringConvertible {
    case bool(Bool)
    case number(Double)
    case string(String)

    public static func == (lhs: Leaf, rhs: Leaf) -> Bool {
        switch (lhs, rhs) {
        case let (.bool(l), .bool(r)): return l == r
        case let (.number(l), .number(r)): return l.bitPattern == r.bitPattern
        case let (.string(l), .string(r)): return l.utf8.elementsEqual(r.utf8)
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .bool(let flag): hasher.combine(0); hasher.combine(flag)
        case .number(let number): hasher.combine(1); hasher.combine(number.bitPattern)
        case .string(let text): hasher.combine(2); hasher.combine(text.utf8.count); text.utf8.forEach { hasher.combine($0) }
        }
    }

    /// The value as JSON.
    public var json: JSONValue {
        switch self {
        case .bool(let flag): return .bool(flag)
        case .number(let number): return .number(number)
        case .string(let text): return .string(text)
        }
    }

    public var description: String { JSONWriter.string(json) }
}

/// A node's priority: the legacy ordering value, a number or a string.
public enum Priority: Sendable, Hashable {
    case number(Double)
    case string(String)

    public static func == (lhs: Priority, rhs: Priority) -> Bool { Leaf(lhs) == Leaf(rhs) }

    public func hash(into hasher: inout Hasher) { Leaf(self).hash(into: &hasher) }

    /// The priority a leaf stands for, if it can be one (booleans cannot).
    public init?(_ leaf: Leaf) {
        switch leaf {
        case .number(let number): self = .number(number)
        case .string(let text): self = .string(text)
        case .bool: return nil
        }
    }
}

extension Leaf {
    /// The leaf form of a priority, for `a/.priority` reads and JSON output.
    public init(_ priority: Priority) {
        switch priority {
        case .number(let number): self = .number(number)
        case .string(let text): self = .string(text)
        }
    }
}
