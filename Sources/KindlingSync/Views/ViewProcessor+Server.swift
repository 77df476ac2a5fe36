import KindlingCore

/// Server data: update the server cache, then recompute the event cache where no pending write
/// hides the change.
extension ViewProcessor {
    func applyServerOverwrite(
        _ oldCache: ViewCache,
        at changePath: Path,
        _ changedSnap: Node,
        writes: WriteTreeRef,
        completeCache: Node?,
        filterServerNode: Bool,
        changes: inout ChildChangeAccumulator?
    ) -> ViewCache {
        let oldServer = oldCache.serverCache
        let serverFilter: any NodeFilter = filterServerNode ? filter : filter.indexedFilter
        let newServerNode: Node
        if let childKey = changePath.first {
            if serverFilter.filtersNodes && !oldServer.isFiltered {
                // The cache is about to become filtered: filter all of it, not just this child.
                let updated = oldServer.node.setting(changedSnap, at: changePath)
                newServerNode = ViewProcessor.discarding {
                    serverFilter.updateFullNode(oldServer.node, updated, changes: &$0)
                }
            } else {
                // Deep data for a child this cache does not hold was meant for another listener.
                if !oldServer.isCompleteForPath(changePath) && changePath.count > 1 { return oldCache }
                let childChangePath = changePath.dropFirst()
                let newChild = oldServer.node.child(childKey).setting(changedSnap, at: childChangePath)
                if childKey.isPriority {
                    newServerNode = serverFilter.updatePriority(oldServer.node, newChild)
                } else {
                    newServerNode = ViewProcessor.discarding {
                        serverFilter.updateChild(
                            oldServer.node, key: childKey, newChild: newChild, affectedPath: childChangePath,
                            source: .none, changes: &$0)
                    }
                }
            }
        } else {
            newServerNode = ViewProcessor.discarding {
                serverFilter.updateFullNode(oldServer.node, changedSnap, changes: &$0)
            }
        }
        let newCache = oldCache.updatingServerSnap(
            newServerNode, complete: oldServer.isFullyInitialized || changePath.isRoot,
            filtered: serverFilter.filtersNodes)
        let source = CompleteChildSource.writes(writes, newCache, completeServerCache: completeCache)
        return eventCacheAfterServerEvent(newCache, at: changePath, writes: writes, source: source, changes: &changes)
    }

    func applyServerMerge(
        _ viewCache: ViewCache,
        at path: Path,
        _ changedChildren: OrderedPathTree<Node>,
        writes: WriteTreeRef,
        completeCache: Node?,
        filterServerNode: Bool,
        changes: inout ChildChangeAccumulator?
    ) -> ViewCache {
        // Without any server data yet, the merge was meant for an earlier listen here; the full
        // data for this one is on its way.
        if viewCache.serverCache.node.isEmpty && !viewCache.serverCache.isFullyInitialized { return viewCache }
        var mergeTree = OrderedPathTree<Node>()
        if path.isRoot { mergeTree = changedChildren } else { mergeTree.setTree(changedChildren, at: path) }
        let serverNode = viewCache.serverCache.node
        var current = viewCache
        // Children already cached go first: in a full window they may make room for new ones.
        for branch in mergeTree.children where serverNode.hasChild(branch.key) {
            let newChild = ViewProcessor.applyMerge(branch.tree, to: serverNode.child(branch.key))
            current = applyServerOverwrite(
                current, at: Path(keys: [branch.key]), newChild, writes: writes, completeCache: completeCache,
                filterServerNode: filterServerNode, changes: &changes)
        }
        for branch in mergeTree.children where !serverNode.hasChild(branch.key) {
            // A deep merge into a child we know nothing about would make up data.
            let isUnknownDeepMerge = !viewCache.serverCache.isCompleteForChild(branch.key) && branch.tree.value == nil
            if isUnknownDeepMerge { continue }
            let newChild = ViewProcessor.applyMerge(branch.tree, to: serverNode.child(branch.key))
            current = applyServerOverwrite(
                current, at: Path(keys: [branch.key]), newChild, writes: writes, completeCache: completeCache,
                filterServerNode: filterServerNode, changes: &changes)
        }
        return current
    }

    /// `node` with every write of `merge` applied, deeper ones first.
    static func applyMerge(_ merge: OrderedPathTree<Node>, to node: Node) -> Node {
        var result = node
        merge.forEach { path, child in result = result.setting(child, at: path) }
        return result
    }

    func listenComplete(
        _ viewCache: ViewCache,
        at path: Path,
        writes: WriteTreeRef,
        changes: inout ChildChangeAccumulator?
    ) -> ViewCache {
        let oldServer = viewCache.serverCache
        let newCache = viewCache.updatingServerSnap(
            oldServer.node, complete: oldServer.isFullyInitialized || path.isRoot, filtered: oldServer.isFiltered)
        return eventCacheAfterServerEvent(newCache, at: path, writes: writes, source: .none, changes: &changes)
    }

    /// The event cache after the server cache changed at `changePath`.
    func eventCacheAfterServerEvent(
        _ viewCache: ViewCache,
        at changePath: Path,
        writes: WriteTreeRef,
        source: CompleteChildSource,
        changes: inout ChildChangeAccumulator?
    ) -> ViewCache {
        let oldEvent = viewCache.eventCache
        // A pending write hides the change entirely.
        if writes.shadowingWrite(at: changePath) != nil { return viewCache }
        let newEventNode: Node
        if let childKey = changePath.first {
            if childKey.isPriority {
                let updatedPriority = writes.eventCacheAfterServerOverwrite(
                    childPath: changePath, existingServerSnap: viewCache.serverCache.node)
                if let updatedPriority {
                    newEventNode = filter.updatePriority(oldEvent.node, updatedPriority)
                } else {
                    newEventNode = oldEvent.node
                }
            } else {
                let childChangePath = changePath.dropFirst()
                let newChild: Node?
                if oldEvent.isCompleteForChild(childKey) {
                    let update = writes.eventCacheAfterServerOverwrite(
                        childPath: changePath, existingServerSnap: viewCache.serverCache.node)
                    let oldChild = oldEvent.node.child(childKey)
                    newChild = update.map { oldChild.setting($0, at: childChangePath) } ?? oldChild
                } else {
                    newChild = writes.completeChild(childKey, serverCache: viewCache.serverCache)
                }
                if let newChild {
                    newEventNode = filter.updateChild(
                        oldEvent.node, key: childKey, newChild: newChild, affectedPath: childChangePath,
                        source: source, changes: &changes)
                } else {
                    newEventNode = oldEvent.node
                }
            }
        } else if viewCache.serverCache.isFiltered {
            // Filtered server data: apply writes to the complete children only, or events could
            // be raised for children whose deep data is partial.
            let serverNode = viewCache.serverCache.node
            let completeChildren = serverNode.isLeaf ? Node.empty : serverNode
            let eventChildren = writes.completeEventChildren(serverChildren: completeChildren)
            newEventNode = filter.updateFullNode(oldEvent.node, eventChildren, changes: &changes)
        } else {
            let complete = writes.completeEventCache(serverCache: viewCache.completeServerSnap) ?? .empty
            newEventNode = filter.updateFullNode(oldEvent.node, complete, changes: &changes)
        }
        return viewCache.updatingEventSnap(
            newEventNode, complete: oldEvent.isFullyInitialized || changePath.isRoot, filtered: filter.filtersNodes)
    }
}
