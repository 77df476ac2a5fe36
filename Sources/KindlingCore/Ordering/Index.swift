/// What a query orders children by.
public enum Index: Sendable, Hashable, CustomStringConvertible {
    /// The children's priorities (the default order).
    case priority
    /// The keys.
    case key
    /// The children's own values.
    case value
    /// The value at a path below each child (`orderByChild("a/b")`).
    case child(Path)

    /// The value this index sorts a child by.
    public func indexedValue(of node: Node) -> Node {
        switch self {
        case .priority: return node.priority.map { Node(Leaf($0)) } ?? .empty
        case .key: return .empty
        case .value: return node
        case .child(let path): return node.child(at: path)
        }
    }

    /// Compares two children: by their indexed values in the type order
    /// (null < false < true < numbers < strings < objects), ties broken by key.
    public func compare(_ lhs: (key: Key, node: Node), _ rhs: (key: Key, node: Node)) -> Int {
        if case .key = self { return Key.compare(lhs.key, rhs.key) }
        let order = NodeOrder.compare(indexedValue(of: lhs.node), indexedValue(of: rhs.node))
        return order != 0 ? order : Key.compare(lhs.key, rhs.key)
    }

    /// The wire name: `.key`, `.value`, `.priority` or the child path.
    public var description: String {
        switch self {
        case .priority: return ".priority"
        case .key: return ".key"
        case .value: return ".value"
        case .child(let path): return path.relativeString
        }
    }
}

/// The order of indexed values: null, false, true, numbers ascending, strings in UTF-16 order,
/// then objects, which all tie.
public enum NodeOrder {
    /// Negative, zero or positive as `lhs` sorts before, with or after `rhs`.
    public static func compare(_ lhs: Node, _ rhs: Node) -> Int {
        let (l, r) = (rank(lhs), rank(rhs))
        if l != r { return l < r ? -1 : 1 }
        switch (lhs.leaf, rhs.leaf) {
        case let (.number(a)?, .number(b)?): return a < b ? -1 : (a > b ? 1 : 0)
        case let (.string(a)?, .string(b)?): return UTF16Order.compare(a, b).signum()
        default: return 0
        }
    }

    /// The rank of numbers in the type order.
    static let numberRank = 3
    /// The rank of strings in the type order.
    static let stringRank = 4

    static func rank(_ node: Node) -> Int {
        guard !node.isEmpty else { return 0 }
        switch node.leaf {
        case .bool(false)?: return 1
        case .bool(true)?: return 2
        case .number?: return numberRank
        case .string?: return stringRank
        case nil: return 5
        }
    }
}
