import KindlingCore

/// Where a filter can look up data it does not hold itself: complete children from the event
/// cache, the server cache or the pending writes, and the neighbour that slides into a limited
/// window.
///
/// `none` is used while replaying server data into a server cache, which must not borrow from
/// local writes.
enum CompleteChildSource: Sendable {
    case none
    /// The writes at the view's location, the view's caches, and a complete server cache found
    /// higher up the tree, if any.
    case writes(WriteTreeRef, ViewCache, completeServerCache: Node?)

    /// The complete child `key`, or nil when it is not fully known.
    func completeChild(_ key: Key) -> Node? {
        guard case .writes(let writes, let viewCache, let completeServerCache) = self else { return nil }
        if viewCache.eventCache.isCompleteForChild(key) { return viewCache.eventCache.node.child(key) }
        let serverCache =
            completeServerCache.map { CacheNode($0, fullyInitialized: true, filtered: false) } ?? viewCache.serverCache
        return writes.completeChild(key, serverCache: serverCache)
    }

    /// The child after `child` in `index` order (before it when `reversed`) in the complete data.
    func child(after child: NamedNode, index: Index, reversed: Bool) -> NamedNode? {
        guard case .writes(let writes, let viewCache, let completeServerCache) = self else { return nil }
        let serverData = completeServerCache ?? viewCache.completeServerSnap
        return writes.child(after: child, serverData: serverData, index: index, reversed: reversed)
    }
}
