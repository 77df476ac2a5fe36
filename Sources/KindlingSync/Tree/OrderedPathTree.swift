import KindlingCore

/// A sparse tree of values keyed by path: the shape behind the client's tree of sync points, its
/// pending writes and the children of a merge.
///
/// Siblings are kept in UTF-16 order of their names (JavaScript's `<`), not in Firebase key
/// order, because that is the order the SDKs walk these trees in: two listeners at `a/10` and
/// `a/9` raise their events `10` first. Tests compare against events in that exact order.
struct OrderedPathTree<Value> {
    /// The value stored at this node, if any.
    var value: Value?
    /// The subtrees below, sorted by the UTF-16 order of their names.
    private(set) var children: [Branch]

    /// One named subtree.
    struct Branch {
        var key: Key
        var tree: OrderedPathTree
    }

    init(_ value: Value? = nil) {
        self.value = value
        self.children = []
    }

    /// True when neither this node nor any below it holds a value.
    var isEmpty: Bool { value == nil && children.isEmpty }

    /// The position of `key` among the children, or where it would go.
    private func search(_ key: Key) -> (index: Int, found: Bool) {
        var low = 0
        var high = children.count
        while low < high {
            let mid = (low + high) / 2
            let order = UTF16Order.compare(children[mid].key.string, key.string)
            if order == 0 { return (mid, true) }
            if order < 0 { low = mid + 1 } else { high = mid }
        }
        return (low, false)
    }

    /// The subtree named `key`, if present.
    func child(_ key: Key) -> OrderedPathTree? {
        let (index, found) = search(key)
        return found ? children[index].tree : nil
    }

    /// The subtree at `path`; an empty tree when nothing is stored there.
    func subtree(at path: Path) -> OrderedPathTree {
        var tree = self
        for key in path.keys {
            guard let next = tree.child(key) else { return OrderedPathTree() }
            tree = next
        }
        return tree
    }

    /// The value at `path`, if any.
    func value(at path: Path) -> Value? {
        var tree = self
        for key in path.keys {
            guard let next = tree.child(key) else { return nil }
            tree = next
        }
        return tree.value
    }

    /// Stores `value` at `path`, keeping whatever lies below it.
    mutating func set(_ value: Value, at path: Path) {
        modifySubtree(at: path.keys[...]) { $0.value = value }
    }

    /// Replaces the whole subtree at `path` (an empty tree removes it).
    mutating func setTree(_ tree: OrderedPathTree, at path: Path) {
        modifySubtree(at: path.keys[...]) { $0 = tree }
    }

    /// Removes the value at `path`, and any parents left holding nothing.
    mutating func removeValue(at path: Path) {
        modifySubtree(at: path.keys[...]) { $0.value = nil }
    }

    /// Gives `body` the subtree at `path` (created if missing) to change in place; subtrees left
    /// empty are pruned on the way back up.
    private mutating func modifySubtree(at path: ArraySlice<Key>, _ body: (inout OrderedPathTree) -> Void) {
        guard let key = path.first else {
            body(&self)
            return
        }
        let (index, found) = search(key)
        if !found { children.insert(Branch(key: key, tree: OrderedPathTree()), at: index) }
        children[index].tree.modifySubtree(at: path.dropFirst(), body)
        if children[index].tree.isEmpty { children.remove(at: index) }
    }

    /// Gives `body` the value at `path` to change in place; nil when nothing is stored there.
    mutating func modifyValue<R>(at path: Path, _ body: (inout Value) -> R) -> R? {
        modifyValue(at: path.keys[...], body)
    }

    private mutating func modifyValue<R>(at path: ArraySlice<Key>, _ body: (inout Value) -> R) -> R? {
        guard let key = path.first else {
            guard value != nil else { return nil }
            return body(&value!)
        }
        let (index, found) = search(key)
        guard found else { return nil }
        return children[index].tree.modifyValue(at: path.dropFirst(), body)
    }

    /// Gives `body` the child subtree named `key` to change in place; nil when it is absent.
    /// The body must not empty the subtree (sync operations only change values in place).
    mutating func modifyChild<R>(_ key: Key, _ body: (inout OrderedPathTree) -> R) -> R? {
        let (index, found) = search(key)
        guard found else { return nil }
        return body(&children[index].tree)
    }

    /// The highest value on the way from this node down `path` (this node and the node at
    /// `path` included), with its path relative to this node.
    func rootmostValue(on path: Path) -> (path: Path, value: Value)? {
        var tree = self
        var walked: [Key] = []
        for key in path.keys {
            if let value = tree.value { return (Path(keys: walked), value) }
            guard let next = tree.child(key) else { return nil }
            walked.append(key)
            tree = next
        }
        return tree.value.map { (Path(keys: walked), $0) }
    }

    /// The first non-nil result of `body` on the values from this node down to `path` (both
    /// included), highest first.
    func firstOnPath<R>(_ path: Path, _ body: (Path, Value) -> R?) -> R? {
        var tree = self
        var walked: [Key] = []
        var remaining = path.keys[...]
        while true {
            if let value = tree.value, let result = body(Path(keys: walked), value) { return result }
            guard let key = remaining.popFirst(), let next = tree.child(key) else { return nil }
            walked.append(key)
            tree = next
        }
    }

    /// Calls `body` on the values strictly above `path`, highest first (the node at `path`
    /// itself is left out).
    func forEachAbove(_ path: Path, _ body: (Path, Value) -> Void) {
        var tree = self
        var walked: [Key] = []
        for key in path.keys {
            if let value = tree.value { body(Path(keys: walked), value) }
            guard let next = tree.child(key) else { return }
            walked.append(key)
            tree = next
        }
    }

    /// Calls `body` on every value, each subtree before its parent and siblings in order.
    func forEach(_ body: (Path, Value) -> Void) {
        forEach(prefix: [], body)
    }

    private func forEach(prefix: [Key], _ body: (Path, Value) -> Void) {
        for branch in children { branch.tree.forEach(prefix: prefix + [branch.key], body) }
        if let value { body(Path(keys: prefix), value) }
    }

    /// Calls `body` on the values of the immediate children.
    func forEachChildValue(_ body: (Key, Value) -> Void) {
        for branch in children {
            if let value = branch.tree.value { body(branch.key, value) }
        }
    }

    /// Folds the tree bottom-up: `body` gets each node's path, value and its children's results.
    func fold<R>(_ body: (Path, Value?, [(key: Key, result: R)]) -> R) -> R {
        fold(prefix: [], body)
    }

    private func fold<R>(prefix: [Key], _ body: (Path, Value?, [(key: Key, result: R)]) -> R) -> R {
        let results = children.map { ($0.key, $0.tree.fold(prefix: prefix + [$0.key], body)) }
        return body(Path(keys: prefix), value, results)
    }
}

extension OrderedPathTree: Sendable where Value: Sendable {}
extension OrderedPathTree.Branch: Sendable where Value: Sendable {}
