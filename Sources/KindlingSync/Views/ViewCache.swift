import KindlingCore

/// The two caches of a view: what the server sent (`serverCache`), and what the user sees, the
/// server's data with pending local writes applied and the query's filter run (`eventCache`).
///
/// Keeping the server's copy apart lets a reverted or acknowledged write be undone by replaying
/// server data, and events are computed by diffing old and new event caches.
struct ViewCache: Sendable {
    var eventCache: CacheNode
    var serverCache: CacheNode

    /// The event cache replaced.
    func updatingEventSnap(_ node: Node, complete: Bool, filtered: Bool) -> ViewCache {
        ViewCache(eventCache: CacheNode(node, fullyInitialized: complete, filtered: filtered), serverCache: serverCache)
    }

    /// The server cache replaced.
    func updatingServerSnap(_ node: Node, complete: Bool, filtered: Bool) -> ViewCache {
        ViewCache(eventCache: eventCache, serverCache: CacheNode(node, fullyInitialized: complete, filtered: filtered))
    }

    /// The server data when fully known.
    var completeServerSnap: Node? { serverCache.completeNode }
}
