/// Values stored at paths, as a tree: the shape the server needs for everything it keeps per
/// location (listens, indexes). Finding the values on a path, or below one, costs O(depth) plus
/// what is found, never a scan of everything stored.
public struct PathTree<Value: Sendable>: Sendable {
    /// The value at this tree's root.
    public var value: Value?
    private var children: [Key: PathTree<Value>] = [:]

    public init() {}

    /// True when nothing is stored anywhere in the tree.
    public var isEmpty: Bool { value == nil && children.isEmpty }

    /// The value at `path`.
    public subscript(path: Path) -> Value? {
        get { subtree(at: path)?.value }
        set { update(path.keys[...]) { $0 = newValue } }
    }

    /// Changes the value at `path` in place; the tree drops branches left empty.
    public mutating func update<R>(_ path: Path, _ body: (inout Value?) -> R) -> R {
        update(path.keys[...], body)
    }

    private mutating func update<R>(_ keys: ArraySlice<Key>, _ body: (inout Value?) -> R) -> R {
        guard let key = keys.first else { return body(&value) }
        var child = children.removeValue(forKey: key) ?? PathTree()
        let result = child.update(keys.dropFirst(), body)
        if !child.isEmpty { children[key] = child }
        return result
    }

    /// The tree below `path`, if anything is stored there.
    public func subtree(at path: Path) -> PathTree? {
        var tree = self
        for key in path.keys {
            guard let child = tree.children[key] else { return nil }
            tree = child
        }
        return tree
    }

    /// Calls `body` for each value on `path`, from the root down to `path` itself, with the
    /// path it is stored at.
    public func forEachOnPath(_ path: Path, _ body: (Path, Value) -> Void) {
        var tree = self
        var prefix: [Key] = []
        if let value { body(.root, value) }
        for key in path.keys {
            guard let child = tree.children[key] else { return }
            prefix.append(key)
            tree = child
            if let value = tree.value { body(Path(keys: prefix), value) }
        }
    }

    /// Calls `body` for each value strictly below the root of this tree, with its path relative
    /// to this root.
    public func forEachBelow(_ body: (Path, Value) -> Void) {
        var prefix: [Key] = []
        forEachBelow(&prefix, body)
    }

    private func forEachBelow(_ prefix: inout [Key], _ body: (Path, Value) -> Void) {
        for (key, child) in children {
            prefix.append(key)
            if let value = child.value { body(Path(keys: prefix), value) }
            child.forEachBelow(&prefix, body)
            prefix.removeLast()
        }
    }

    /// Calls `body` for every value in the tree (at the root and below).
    public func forEach(_ body: (Path, Value) -> Void) {
        if let value { body(.root, value) }
        forEachBelow(body)
    }
}
