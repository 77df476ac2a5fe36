import KindlingCore

/// The event-cache arithmetic: what the user sees at a location is the server's data there with
/// the pending writes laid over it, and these functions work out as much of that as is known.
extension WriteTree {
    /// The complete data at `path` once writes are applied to `serverCache` (the server's complete
    /// data there, if known), or nil when it cannot be known. Transactions may leave some writes
    /// out or take hidden ones in.
    func completeEventCache(
        at path: Path,
        serverCache: Node?,
        excluding excluded: Set<Int> = [],
        includeHidden: Bool = false
    ) -> Node? {
        if excluded.isEmpty && !includeHidden {
            if let shadowing = visibleWrites.completeNode(at: path) { return shadowing }
            let merge = visibleWrites.childWrite(at: path)
            if merge.isEmpty { return serverCache }
            if serverCache == nil && !merge.hasCompleteWrite(at: .root) { return nil }
            return merge.apply(to: serverCache ?? .empty)
        }
        let merge = visibleWrites.childWrite(at: path)
        if !includeHidden && merge.isEmpty { return serverCache }
        if !includeHidden && serverCache == nil && !merge.hasCompleteWrite(at: .root) { return nil }
        let layered = WriteTree.layer(allWrites, at: path) { write in
            (write.visible || includeHidden) && !excluded.contains(write.writeID)
                && (write.path.contains(path) || path.contains(write.path))
        }
        return layered.apply(to: serverCache ?? .empty)
    }

    /// The children at `path` whose data is known, from the server's complete children (if any)
    /// and the writes; used to fill a new view whose location is not fully known.
    func completeEventChildren(at path: Path, serverChildren: Node?) -> Node {
        var result = Node.empty
        if let topLevel = visibleWrites.completeNode(at: path) {
            // A write covers everything here.
            if !topLevel.isLeaf {
                for (key, child) in topLevel.children { result.setChild(key, child) }
            }
            return result
        }
        let merge = visibleWrites.childWrite(at: path)
        if let serverChildren {
            for (key, child) in serverChildren.children {
                result.setChild(key, merge.childWrite(at: Path(keys: [key])).apply(to: child))
            }
        }
        for (key, child) in merge.completeChildren { result.setChild(key, child) }
        return result
    }

    /// What the event cache should show at `treePath/childPath` now that the server's data there
    /// changed: nil when a write hides the location entirely (no events), else the server's data
    /// with any partial writes laid over it.
    func eventCacheAfterServerOverwrite(
        at treePath: Path,
        childPath: Path,
        existingServerSnap: Node
    ) -> Node? {
        let path = treePath.appending(childPath)
        if visibleWrites.hasCompleteWrite(at: path) { return nil }
        let childMerge = visibleWrites.childWrite(at: path)
        let serverChild = existingServerSnap.child(at: childPath)
        return childMerge.isEmpty ? serverChild : childMerge.apply(to: serverChild)
    }

    /// The complete child `key` at `treePath` after writes, or nil when neither the writes nor
    /// the server cache know all of it.
    func completeChild(at treePath: Path, key: Key, serverCache: CacheNode) -> Node? {
        let path = treePath.child(key)
        if let shadowing = visibleWrites.completeNode(at: path) { return shadowing }
        guard serverCache.isCompleteForChild(key) else { return nil }
        return visibleWrites.childWrite(at: path).apply(to: serverCache.node.child(key))
    }

    /// The write that completely covers `path`, if any.
    func shadowingWrite(at path: Path) -> Node? {
        visibleWrites.completeNode(at: path)
    }

    /// The first child after `post` (before it when `reversed`) in `index` order, in the complete
    /// data at `treePath` after writes: what slides into a limited window when a child leaves.
    func child(
        after post: NamedNode,
        at treePath: Path,
        serverData: Node?,
        index: Index,
        reversed: Bool
    ) -> NamedNode? {
        let merge = visibleWrites.childWrite(at: treePath)
        let data: Node
        if let shadowing = merge.completeNode(at: .root) {
            data = shadowing
        } else if let serverData {
            data = merge.apply(to: serverData)
        } else {
            return nil
        }
        return data.child(after: post, by: index, reversed: reversed)
    }
}
