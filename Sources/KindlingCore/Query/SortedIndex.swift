/// The children of one location kept in one query order, updated with every write, so that a
/// window query costs O(log n + k) instead of a sort of all n children.
///
/// Each entry maps (indexed value, key) to the child itself, so a window is read straight out of
/// the index. The key order needs no index: the children map is already in key order.
public struct SortedIndex: Sendable {
    /// The order kept.
    public let index: Index
    private var entries = OrderedMap<IndexKey>()

    /// Builds the index over the children of `node`.
    public init(_ index: Index, over node: Node) {
        precondition(index != .key, "the key order needs no index")
        self.index = index
        var sorted = node.children.enumerated().map { position, child in
            ScannedChild(value: index.indexedValue(of: child.node), key: child.key, node: child.node, position: position)
        }
        sorted.sort { ScannedChild.compare($0, $1) < 0 }
        entries = OrderedMap(sortedEntries: sorted.map { (key: $0.key, node: $0.node) })
    }

    /// The number of children indexed.
    public var count: Int { entries.count }

    /// Moves child `key` from its old value to its new one (either may be empty).
    public mutating func update(_ key: Key, from old: Node, to new: Node) {
        if !old.isEmpty { entries.set(IndexKey(value: index.indexedValue(of: old), name: .key(key)), .empty) }
        if !new.isEmpty { entries.set(IndexKey(value: index.indexedValue(of: new), name: .key(key)), new) }
    }

    /// The query's window, in query order. The query must use this index's order.
    public func window(_ query: Query) -> [(key: Key, node: Node)] {
        precondition(query.index == index, "query order does not match the index")
        var low = 0
        var high = entries.count
        if let start = query.start {
            let post = IndexKey(value: start.value, name: start.name)
            low = entries.rank(of: post) + (start.inclusive || entries[post] == nil ? 0 : 1)
        }
        if let end = query.end {
            let post = IndexKey(value: end.value, name: end.name)
            high = entries.rank(of: post) + (end.inclusive && entries[post] != nil ? 1 : 0)
        }
        guard low < high else { return [] }
        if let limit = query.limit { (low, high) = limit.clamp(low, high) }
        return (low..<high).map { rank in
            let entry = entries.entry(at: rank)
            guard case .key(let key) = entry.key.name else { preconditionFailure("Internal inconsistency: a post in an index") }
            return (key, entry.node)
        }
    }
}
