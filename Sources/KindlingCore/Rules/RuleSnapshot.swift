/// A `RuleDataSnapshot`: a node of the old or the new tree and where it is.
///
/// The location is the first `depth` keys of the path being checked plus `extra` keys (from
/// `child(…)`), so the common snapshots (`data`, `newData`, `root`, `child('literal')`) are made
/// without allocating; a path is built only when `parent()` needs to walk back up.
struct RuleSnapshot: Sendable {
    /// True for a `newData` snapshot (its `parent()` stays in the new tree).
    var isNew: Bool
    var node: Node
    var depth: Int
    var extra: [Key]

    init(isNew: Bool, node: Node, depth: Int, extra: [Key] = []) {
        self.isNew = isNew
        self.node = node
        self.depth = depth
        self.extra = extra
    }

    /// The snapshot at `keys` below this one.
    func child(_ keys: [Key]) -> RuleSnapshot {
        var node = self.node
        for key in keys {
            if node.isEmpty { break }
            node = node.child(key)
        }
        return RuleSnapshot(isNew: isNew, node: node, depth: depth, extra: extra.isEmpty ? keys : extra + keys)
    }

    /// The value `val()` gives: a primitive, null, or the opaque object of a parent.
    var value: RuleValue {
        if node.isEmpty { return .null }
        if let leaf = node.leaf { return RuleValue(leaf) }
        return .object(node)
    }

    /// True for a parent node.
    var hasChildren: Bool { !node.isEmpty && !node.isLeaf }
}
