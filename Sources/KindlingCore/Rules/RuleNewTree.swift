/// The tree after a write, as `newData` sees it, without building it: a rule that reads
/// `newData` at a location gets the old node there with the write applied to that subtree only.
///
/// Building the whole tree after a write copies every level from the root down (the tree is
/// shared, so it cannot be changed in place), which cost more than deciding the write. Here, for
/// a set at P: below P the node is the written node's child; at or above P it is the old node
/// with the written node set into it, built only from that level down (a record-level
/// `.validate` rebuilds one record, never the root); elsewhere it is the old node. A merge
/// applies its entries the same way, in order. A merge of many entries is applied to the whole
/// tree once instead, so that no location rescans every entry.
struct RuleNewTree {
    private enum Kind {
        /// The tree after the write is `old`, already built (reads see the empty tree).
        case built
        /// A set of `setNode` at `setKeys` on `old`.
        case set
        /// A merge: `entries` (full paths and nodes) applied to `old` in order.
        case merge
    }

    // Stored apart rather than as an enum's payloads, so that reading them while a rule runs
    // copies nothing.
    private let kind: Kind
    private let old: Node
    private let setKeys: [Key]
    private let setNode: Node
    private let entries: [(keys: [Key], node: Node)]

    /// Merges with more entries than this are applied to the whole tree up front: a lazy location
    /// costs one comparison per entry, the built tree one path copy per entry in all.
    static let lazyEntryLimit = 8

    /// The tree `old` becomes after `write`.
    init(old: Node, write: Write) {
        switch write {
        case .set(let path, let node):
            (kind, self.old, setKeys, setNode, entries) = (.set, old, path.keys, node, [])
        case .merge(let base, let entries) where entries.count <= RuleNewTree.lazyEntryLimit:
            (kind, self.old, setKeys, setNode) = (.merge, old, [], .empty)
            self.entries = entries.map { (base.keys + $0.path.keys, $0.node) }
        case .merge(let base, let entries):
            var root = old
            for entry in entries { root.set(entry.node, at: base.appending(entry.path)) }
            (kind, self.old, setKeys, setNode, self.entries) = (.built, root, [], .empty, [])
        }
    }

    /// A tree given whole: the empty tree for reads, or one built eagerly (tests compare the two).
    init(built root: Node) {
        (kind, old, setKeys, setNode, entries) = (.built, root, [], .empty, [])
    }

    /// The node at `keys[0..<count]` in the new tree. `old`, when given, is the old tree's node
    /// there (the caller often has it already).
    func node(at keys: [Key], count: Int, old: Node?) -> Node {
        if case .built = kind { return RuleNewTree.descend(self.old, keys, from: 0, to: count) }
        // A priority is set on the node that holds it, so below a `.priority` key the node is
        // read from the level above it.
        for index in 0..<count where keys[index].isPriority {
            return RuleNewTree.descend(node(at: keys, count: index, old: nil), keys, from: index, to: count)
        }
        let current = old ?? RuleNewTree.descend(self.old, keys, from: 0, to: count)
        if case .set = kind { return RuleNewTree.apply(setNode, at: setKeys, to: current, at: keys, count) }
        var result = current
        for entry in entries { result = RuleNewTree.apply(entry.node, at: entry.keys, to: result, at: keys, count) }
        return result
    }

    /// `current`, the node at `keys[0..<count]`, after `node` is written at `written`.
    private static func apply(_ node: Node, at written: [Key], to current: Node, at keys: [Key], _ count: Int) -> Node {
        for index in 0..<min(written.count, count) where written[index] != keys[index] { return current }
        if written.count <= count { return descend(node, keys, from: written.count, to: count) }
        return current.setting(node, at: written, from: count)
    }

    /// The node at `keys[start..<end]` below `node`.
    private static func descend(_ node: Node, _ keys: [Key], from start: Int, to end: Int) -> Node {
        var node = node
        for index in start..<end {
            if node.isEmpty { break }
            node = node.child(keys[index])
        }
        return node
    }
}
