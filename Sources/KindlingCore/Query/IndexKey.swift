/// An entry of a sorted index: a child's indexed value and its key, ordered as queries order
/// children (value in the type order, then key). With a sentinel name it is a query's start or
/// end post, so a range's bounds are found by rank.
public struct IndexKey: OrderedKey {
    public var value: Node
    public var name: BoundName

    public init(value: Node, name: BoundName) {
        self.value = value
        self.name = name
    }

    /// The child's key; a post (a query bound) has none and must not be asked.
    var childKey: Key {
        guard case .key(let key) = name else { preconditionFailure("Internal inconsistency: a post in place of a child") }
        return key
    }

    public static func compare(_ lhs: IndexKey, _ rhs: IndexKey) -> Int {
        let order = NodeOrder.compare(lhs.value, rhs.value)
        if order != 0 { return order }
        switch (lhs.name, rhs.name) {
        case (.min, .min), (.max, .max): return 0
        case (.min, _), (_, .max): return -1
        case (.max, _), (_, .min): return 1
        case let (.key(l), .key(r)): return Key.compare(l, r)
        }
    }
}
