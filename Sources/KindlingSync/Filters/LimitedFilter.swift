import KindlingCore

/// The filter of `limitToFirst`/`limitToLast` queries: a window of at most `limit` children of
/// the range, taken from the start (or the end) of the query's order.
///
/// When the window is full, a change can push a child out and pull another in: a child leaving
/// is replaced by the next child outside the window, which only the complete data (server cache
/// plus writes, via the `CompleteChildSource`) knows.
struct LimitedFilter: NodeFilter {
    let rangedFilter: RangedFilter
    let limit: Int
    /// True for `limitToLast`: the window is taken from the end.
    let reversed: Bool

    init(query: Query, limit: QueryLimit) {
        self.rangedFilter = RangedFilter(query: query)
        self.limit = limit.count
        self.reversed = limit.fromEnd
    }

    var index: Index { rangedFilter.index }

    var filtersNodes: Bool { true }

    var indexedFilter: IndexedFilter { rangedFilter.indexedFilter }

    func updateChild(
        _ snap: Node,
        key: Key,
        newChild: Node,
        affectedPath: Path,
        source: CompleteChildSource,
        changes: inout ChildChangeAccumulator?
    ) -> Node {
        let child = rangedFilter.matches((key, newChild)) ? newChild : .empty
        if snap.child(key) == child { return snap }
        if snap.childCount < limit {
            return indexedFilter.updateChild(
                snap, key: key, newChild: child, affectedPath: affectedPath, source: source, changes: &changes)
        }
        return fullWindowUpdateChild(snap, key: key, newChild: child, source: source, changes: &changes)
    }

    func updateFullNode(_ oldSnap: Node, _ newSnap: Node, changes: inout ChildChangeAccumulator?) -> Node {
        var filtered = Node.empty
        if !newSnap.isLeaf && !newSnap.isEmpty {
            filtered = newSnap.withPriority(nil)
            var count = 0
            for child in newSnap.children(by: index, reversed: reversed) {
                let inWindow = count < limit && rangedFilter.isWithinStart(child) && rangedFilter.isWithinEnd(child)
                if inWindow {
                    count += 1
                } else {
                    filtered.setChild(child.key, .empty)
                }
            }
        }
        return indexedFilter.updateFullNode(oldSnap, filtered, changes: &changes)
    }

    func updatePriority(_ oldSnap: Node, _ priority: Node) -> Node { oldSnap }

    /// Orders two children as the window runs: by index, backwards for `limitToLast`.
    private func compare(_ lhs: NamedNode, _ rhs: NamedNode) -> Int {
        reversed ? index.compare(rhs, lhs) : index.compare(lhs, rhs)
    }

    /// A change to a full window.
    private func fullWindowUpdateChild(
        _ snap: Node,
        key: Key,
        newChild: Node,
        source: CompleteChildSource,
        changes: inout ChildChangeAccumulator?
    ) -> Node {
        // The child at the far end of the window, the first to go when another comes in.
        guard let boundary = reversed ? snap.firstChild(by: index) : snap.lastChild(by: index) else { return snap }
        let inRange = rangedFilter.matches((key, newChild))
        if snap.hasChild(key) {
            let oldChild = snap.child(key)
            // The child just outside the window, skipping children the window holds or that this
            // change is about (a merge may have moved them in the complete data already).
            var next = source.child(after: boundary, index: index, reversed: reversed)
            while let candidate = next, candidate.key == key || snap.hasChild(candidate.key) {
                next = source.child(after: candidate, index: index, reversed: reversed)
            }
            let compareNext = next.map { compare($0, (key, newChild)) } ?? 1
            if inRange && !newChild.isEmpty && compareNext >= 0 {
                changes?.track(.changed(key, newChild, old: oldChild))
                return snap.settingChild(key, newChild)
            }
            changes?.track(.removed(key, oldChild))
            let remaining = snap.settingChild(key, .empty)
            guard let next, rangedFilter.matches(next) else { return remaining }
            changes?.track(.added(next.key, next.node))
            return remaining.settingChild(next.key, next.node)
        }
        if newChild.isEmpty || !inRange { return snap }
        guard compare(boundary, (key, newChild)) >= 0 else { return snap }
        changes?.track(.removed(boundary.key, boundary.node))
        changes?.track(.added(key, newChild))
        return snap.settingChild(key, newChild).settingChild(boundary.key, .empty)
    }
}
