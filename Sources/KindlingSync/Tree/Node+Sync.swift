import KindlingCore

/// A child with its name, as the event machinery passes them around (a child in a window, the
/// boundary of a limit, the neighbour that slides into view).
typealias NamedNode = (key: Key, node: Node)

extension Node {
    /// Replaces child `key` in place.
    mutating func setChild(_ key: Key, _ node: Node) {
        set(node, at: Path(keys: [key]))
    }

    /// The children ordered by `index` (ties broken by key), reversed on request.
    func children(by index: Index, reversed: Bool = false) -> [NamedNode] {
        var entries: [NamedNode] = children.map { ($0.key, $0.node) }
        if case .key = index {} else { entries.sort { index.compare($0, $1) < 0 } }
        if reversed { entries.reverse() }
        return entries
    }

    /// The first child in `index` order.
    func firstChild(by index: Index) -> NamedNode? {
        if case .key = index { return children.first }
        return children.min { index.compare($0, $1) < 0 }.map { ($0.key, $0.node) }
    }

    /// The last child in `index` order.
    func lastChild(by index: Index) -> NamedNode? {
        if case .key = index { return children.last }
        return children.max { index.compare($0, $1) < 0 }.map { ($0.key, $0.node) }
    }

    /// The name of the child just before `(key, node)` in `index` order, or nil when it comes
    /// first (always nil for a leaf): the `prevName` events carry so that a list view knows
    /// where to insert or move a row.
    func predecessor(of key: Key, _ node: Node, by index: Index) -> Key? {
        if case .key = index {
            let rank = children.rank(of: key)
            return rank > 0 ? children.entry(at: rank - 1).key : nil
        }
        var best: NamedNode?
        for entry in children where entry.key != key && index.compare(entry, (key, node)) < 0 {
            if let current = best, index.compare(current, entry) >= 0 { continue }
            best = (entry.key, entry.node)
        }
        return best?.key
    }

    /// The first child strictly after `post` in `index` order (before it when `reversed`):
    /// what slides into a limited window when a child leaves it.
    func child(after post: NamedNode, by index: Index, reversed: Bool) -> NamedNode? {
        var best: NamedNode?
        for entry in children {
            let order = index.compare((entry.key, entry.node), post)
            guard reversed ? order < 0 : order > 0 else { continue }
            if let current = best {
                let closer = index.compare((entry.key, entry.node), current)
                if reversed ? closer <= 0 : closer >= 0 { continue }
            }
            best = (entry.key, entry.node)
        }
        return best
    }
}

extension Index {
    /// True when a change from `old` to `new` can move the child: the SDKs raise `child_moved`
    /// (beside `child_changed`) exactly then. For a child path, two different objects at the path
    /// compare equal and so do not count as a move.
    func indexedValueChanged(_ old: Node, _ new: Node) -> Bool {
        switch self {
        case .key: return false
        case .priority: return old.priority != new.priority
        case .value: return old != new
        case .child(let path): return NodeOrder.compare(old.child(at: path), new.child(at: path)) != 0
        }
    }
}
