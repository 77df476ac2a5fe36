import KindlingCore

/// A view's copy of the data at its location, with how much of it is known.
///
/// A cache may be partial: before the server has answered a listen, a view only knows the
/// children other listeners or local writes told it about. Events may only be raised for what is
/// known, so every read asks first whether the cache is complete for that child.
struct CacheNode: Sendable {
    var node: Node
    /// True once the whole location is known (from the server, or covered by a local write).
    var isFullyInitialized: Bool
    /// True when a query filter dropped children, so a missing child may still exist.
    var isFiltered: Bool

    init(_ node: Node, fullyInitialized: Bool, filtered: Bool) {
        self.node = node
        self.isFullyInitialized = fullyInitialized
        self.isFiltered = filtered
    }

    /// True when the data at `path` (relative to this location) is known.
    func isCompleteForPath(_ path: Path) -> Bool {
        guard let key = path.first else { return isFullyInitialized && !isFiltered }
        return isCompleteForChild(key)
    }

    /// True when the child `key` is known: the whole location is, or the child is cached.
    func isCompleteForChild(_ key: Key) -> Bool {
        (isFullyInitialized && !isFiltered) || node.hasChild(key)
    }

    /// The node when the location is fully known.
    var completeNode: Node? { isFullyInitialized ? node : nil }
}
