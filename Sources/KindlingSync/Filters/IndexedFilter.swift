import KindlingCore

/// The filter of queries that show every child: nothing is dropped, changes are only reported.
struct IndexedFilter: NodeFilter {
    let index: Index

    var filtersNodes: Bool { false }

    var indexedFilter: IndexedFilter { self }

    func updateChild(
        _ snap: Node,
        key: Key,
        newChild: Node,
        affectedPath: Path,
        source: CompleteChildSource,
        changes: inout ChildChangeAccumulator?
    ) -> Node {
        let oldChild = snap.child(key)
        // Nothing changed where the change happened, unless the child appeared or vanished
        // (writing null below a child can empty it).
        if oldChild.child(at: affectedPath) == newChild.child(at: affectedPath), oldChild.isEmpty == newChild.isEmpty {
            return snap
        }
        if newChild.isEmpty {
            if snap.hasChild(key) { changes?.track(.removed(key, oldChild)) }
        } else if oldChild.isEmpty {
            changes?.track(.added(key, newChild))
        } else {
            changes?.track(.changed(key, newChild, old: oldChild))
        }
        if snap.isLeaf && newChild.isEmpty { return snap }
        return snap.settingChild(key, newChild)
    }

    func updateFullNode(_ oldSnap: Node, _ newSnap: Node, changes: inout ChildChangeAccumulator?) -> Node {
        if changes != nil {
            for (key, child) in oldSnap.children where !newSnap.hasChild(key) {
                changes?.track(.removed(key, child))
            }
            for (key, child) in newSnap.children {
                let oldChild = oldSnap.child(key)
                if oldChild.isEmpty {
                    changes?.track(.added(key, child))
                } else if oldChild != child {
                    changes?.track(.changed(key, child, old: oldChild))
                }
            }
        }
        return newSnap
    }

    func updatePriority(_ oldSnap: Node, _ priority: Node) -> Node {
        oldSnap.isEmpty ? .empty : oldSnap.withPriority(priority.leaf.flatMap(Priority.init))
    }
}
