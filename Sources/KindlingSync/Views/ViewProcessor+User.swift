import KindlingCore

/// Local writes: they change the event cache at once (the server cache waits for the server), and
/// acknowledgements or reverts replay server data where the write no longer hides it.
extension ViewProcessor {
    func applyUserOverwrite(
        _ oldCache: ViewCache,
        at changePath: Path,
        _ changedSnap: Node,
        writes: WriteTreeRef,
        completeCache: Node?,
        changes: inout ChildChangeAccumulator?
    ) -> ViewCache {
        let oldEvent = oldCache.eventCache
        let source = CompleteChildSource.writes(writes, oldCache, completeServerCache: completeCache)
        guard let childKey = changePath.first else {
            let node = filter.updateFullNode(oldEvent.node, changedSnap, changes: &changes)
            return oldCache.updatingEventSnap(node, complete: true, filtered: filter.filtersNodes)
        }
        if childKey.isPriority {
            let node = filter.updatePriority(oldEvent.node, changedSnap)
            return oldCache.updatingEventSnap(node, complete: oldEvent.isFullyInitialized, filtered: oldEvent.isFiltered)
        }
        let childChangePath = changePath.dropFirst()
        let oldChild = oldEvent.node.child(childKey)
        let newChild: Node
        if childChangePath.isRoot {
            newChild = changedSnap
        } else if let childNode = source.completeChild(childKey) {
            if childChangePath.last?.isPriority == true,
                childNode.child(at: childChangePath.parent ?? .root).isEmpty
            {
                // A priority on data that does not exist: if the data exists on the server, the
                // server will send the priority with it.
                newChild = childNode
            } else {
                newChild = childNode.setting(changedSnap, at: childChangePath)
            }
        } else {
            // The child is not fully known, so nothing can be shown for it.
            newChild = .empty
        }
        guard oldChild != newChild else { return oldCache }
        let node = filter.updateChild(
            oldEvent.node, key: childKey, newChild: newChild, affectedPath: childChangePath, source: source,
            changes: &changes)
        return oldCache.updatingEventSnap(node, complete: oldEvent.isFullyInitialized, filtered: filter.filtersNodes)
    }

    func applyUserMerge(
        _ viewCache: ViewCache,
        at path: Path,
        _ changedChildren: OrderedPathTree<Node>,
        writes: WriteTreeRef,
        completeCache: Node?,
        changes: inout ChildChangeAccumulator?
    ) -> ViewCache {
        // Children already shown go first: in a full window they may make room for new ones.
        var writesToApply: [(path: Path, node: Node)] = []
        changedChildren.forEach { writesToApply.append((path.appending($0), $1)) }
        var current = viewCache
        for pass in [true, false] {
            for write in writesToApply {
                let shown = write.path.first.map { viewCache.eventCache.isCompleteForChild($0) } ?? true
                guard shown == pass else { continue }
                current = applyUserOverwrite(
                    current, at: write.path, write.node, writes: writes, completeCache: completeCache,
                    changes: &changes)
            }
        }
        return current
    }

    func ackUserWrite(
        _ viewCache: ViewCache,
        at ackPath: Path,
        affected: OrderedPathTree<Bool>,
        writes: WriteTreeRef,
        completeCache: Node?,
        changes: inout ChildChangeAccumulator?
    ) -> ViewCache {
        if writes.shadowingWrite(at: ackPath) != nil { return viewCache }
        let filterServerNode = viewCache.serverCache.isFiltered
        let serverCache = viewCache.serverCache
        // Replay the server's data for the paths the write touched, now that it no longer hides them.
        if affected.value != nil {
            if (ackPath.isRoot && serverCache.isFullyInitialized) || serverCache.isCompleteForPath(ackPath) {
                return applyServerOverwrite(
                    viewCache, at: ackPath, serverCache.node.child(at: ackPath), writes: writes,
                    completeCache: completeCache, filterServerNode: filterServerNode, changes: &changes)
            }
            guard ackPath.isRoot else { return viewCache }
            // The write covered this location but the server data is partial: replay what we have.
            var children = OrderedPathTree<Node>()
            for (key, child) in serverCache.node.children { children.set(child, at: Path(keys: [key])) }
            return applyServerMerge(
                viewCache, at: ackPath, children, writes: writes, completeCache: completeCache,
                filterServerNode: filterServerNode, changes: &changes)
        }
        var children = OrderedPathTree<Node>()
        affected.forEach { mergePath, _ in
            let serverPath = ackPath.appending(mergePath)
            if serverCache.isCompleteForPath(serverPath) {
                children.set(serverCache.node.child(at: serverPath), at: mergePath)
            }
        }
        return applyServerMerge(
            viewCache, at: ackPath, children, writes: writes, completeCache: completeCache,
            filterServerNode: filterServerNode, changes: &changes)
    }

    func revertUserWrite(
        _ viewCache: ViewCache,
        at path: Path,
        writes: WriteTreeRef,
        completeCache: Node?,
        changes: inout ChildChangeAccumulator?
    ) -> ViewCache {
        if writes.shadowingWrite(at: path) != nil { return viewCache }
        let source = CompleteChildSource.writes(writes, viewCache, completeServerCache: completeCache)
        let oldEventNode = viewCache.eventCache.node
        var newEventNode: Node
        if let childKey = path.first, !childKey.isPriority {
            var newChild = writes.completeChild(childKey, serverCache: viewCache.serverCache)
            if newChild == nil && viewCache.serverCache.isCompleteForChild(childKey) {
                newChild = oldEventNode.child(childKey)
            }
            if let newChild {
                newEventNode = filter.updateChild(
                    oldEventNode, key: childKey, newChild: newChild, affectedPath: path.dropFirst(), source: source,
                    changes: &changes)
            } else if oldEventNode.hasChild(childKey) {
                // Nothing complete to show for the child any more: remove it.
                newEventNode = filter.updateChild(
                    oldEventNode, key: childKey, newChild: .empty, affectedPath: path.dropFirst(), source: source,
                    changes: &changes)
            } else {
                newEventNode = oldEventNode
            }
            if newEventNode.isEmpty, let serverNode = viewCache.completeServerSnap,
                let complete = writes.completeEventCache(serverCache: serverNode), complete.isLeaf
            {
                // All child writes are gone and the location was a leaf underneath.
                newEventNode = filter.updateFullNode(newEventNode, complete, changes: &changes)
            }
        } else {
            let newNode: Node
            if let serverNode = viewCache.completeServerSnap {
                newNode = writes.completeEventCache(serverCache: serverNode) ?? .empty
            } else {
                newNode = writes.completeEventChildren(serverChildren: viewCache.serverCache.node)
            }
            newEventNode = filter.updateFullNode(oldEventNode, newNode, changes: &changes)
        }
        let complete = viewCache.serverCache.isFullyInitialized || writes.shadowingWrite(at: .root) != nil
        return viewCache.updatingEventSnap(newEventNode, complete: complete, filtered: filter.filtersNodes)
    }
}
