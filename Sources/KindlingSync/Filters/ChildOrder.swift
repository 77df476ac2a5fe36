import KindlingCore

/// A view's children sorted by its query's index, kept up to date from the view's changes, so
/// that the previous sibling of a child (`prevName` on every child event) costs O(log n) instead
/// of a scan of the whole list.
///
/// It mirrors the view's event cache. Each operation's net child changes turn the old order into
/// the new one; should the two ever disagree (a removal that finds nothing, a count that does not
/// match), the order is rebuilt from the cache, so a slip can cost time but never a wrong answer.
struct ChildOrder: Sendable {
    /// A child's place in the order: its indexed value, then its key (`Index.compare`).
    struct Position: OrderedKey {
        var value: Node
        var key: Key

        static func compare(_ lhs: Position, _ rhs: Position) -> Int {
            let order = NodeOrder.compare(lhs.value, rhs.value)
            return order != 0 ? order : Key.compare(lhs.key, rhs.key)
        }
    }

    let index: Index
    /// The children by position; empty for the key index, where the node's own map is the order.
    private(set) var entries = OrderedMap<Position>()
    /// How often the changes failed to describe the cache and the order was rebuilt (zero unless
    /// something is wrong; tests check it).
    private(set) var repairs = 0

    init(index: Index, node: Node) {
        self.index = index
        rebuild(from: node)
    }

    private var usesKeyOrder: Bool { if case .key = index { return true } else { return false } }

    func position(_ key: Key, _ node: Node) -> Position { Position(value: index.indexedValue(of: node), key: key) }

    /// Reorders from scratch.
    mutating func rebuild(from node: Node) {
        entries = OrderedMap()
        guard !usesKeyOrder else { return }
        for (key, child) in node.children { entries.set(position(key, child), child) }
    }

    /// Brings the order up to date with `node`, the event cache after `changes`.
    mutating func update(with changes: [ChildChange], node: Node) {
        guard !usesKeyOrder else { return }
        var consistent = true
        for change in changes {
            guard let key = change.key else { continue }
            switch change.kind {
            case .childRemoved:
                consistent = consistent && remove(position(key, change.node))
            case .childAdded:
                consistent = consistent && insert(position(key, change.node), change.node)
            case .childChanged:
                guard let old = change.oldNode else {
                    consistent = false
                    continue
                }
                consistent = consistent && remove(position(key, old))
                consistent = consistent && insert(position(key, change.node), change.node)
            default:
                continue
            }
        }
        if !consistent || entries.count != node.childCount {
            repairs += 1
            rebuild(from: node)
        }
    }

    private mutating func remove(_ position: Position) -> Bool {
        guard entries[position] != nil else { return false }
        entries.set(position, .empty)
        return true
    }

    private mutating func insert(_ position: Position, _ node: Node) -> Bool {
        guard entries[position] == nil else { return false }
        entries.set(position, node)
        return true
    }

    /// The key of the child just before `(key, node)` in `eventCache` (which this order mirrors),
    /// or nil when it comes first.
    func predecessor(of key: Key, _ node: Node, in eventCache: Node) -> Key? {
        if usesKeyOrder { return eventCache.predecessor(of: key, node, by: index) }
        let target = position(key, node)
        let rank = entries.rank(of: target)
        guard rank < entries.count, Position.compare(entries.entry(at: rank).key, target) == 0 else {
            // Not where the cache says it is: answer from the cache itself.
            return eventCache.predecessor(of: key, node, by: index)
        }
        return rank > 0 ? entries.entry(at: rank - 1).key.key : nil
    }

    /// The keys in order, for checks.
    var keys: [Key] { entries.map(\.key.key) }
}
