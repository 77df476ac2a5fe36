import KindlingCore

/// The filter of queries with `startAt`/`startAfter`/`endAt`/`endBefore`/`equalTo` and no limit:
/// children outside the range are dropped as if absent.
struct RangedFilter: NodeFilter {
    let query: Query

    var index: Index { query.index }

    var filtersNodes: Bool { true }

    var indexedFilter: IndexedFilter { IndexedFilter(index: query.index) }

    /// True when the child lies inside the range.
    func matches(_ child: NamedNode) -> Bool { query.matches(child.key, child.node) }

    /// True when the child is not before the start of the range.
    func isWithinStart(_ child: NamedNode) -> Bool {
        guard let start = query.start else { return true }
        let order = query.compare(start, toChild: child.key, child.node)
        return start.inclusive ? order <= 0 : order < 0
    }

    /// True when the child is not after the end of the range.
    func isWithinEnd(_ child: NamedNode) -> Bool {
        guard let end = query.end else { return true }
        let order = query.compare(end, toChild: child.key, child.node)
        return end.inclusive ? order >= 0 : order > 0
    }

    func updateChild(
        _ snap: Node,
        key: Key,
        newChild: Node,
        affectedPath: Path,
        source: CompleteChildSource,
        changes: inout ChildChangeAccumulator?
    ) -> Node {
        let child = matches((key, newChild)) ? newChild : .empty
        return indexedFilter.updateChild(
            snap, key: key, newChild: child, affectedPath: affectedPath, source: source, changes: &changes)
    }

    func updateFullNode(_ oldSnap: Node, _ newSnap: Node, changes: inout ChildChangeAccumulator?) -> Node {
        // Queries carry no priority, and a leaf has no children to show.
        var filtered = newSnap.isLeaf ? Node.empty : newSnap.withPriority(nil)
        for (key, child) in newSnap.children where !matches((key, child)) {
            filtered.setChild(key, .empty)
        }
        return indexedFilter.updateFullNode(oldSnap, filtered, changes: &changes)
    }

    func updatePriority(_ oldSnap: Node, _ priority: Node) -> Node { oldSnap }
}
