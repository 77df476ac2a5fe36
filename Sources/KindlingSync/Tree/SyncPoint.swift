import KindlingCore

/// The views at one location: one per distinct query listened to there.
///
/// A sync point exists exactly while it has at least one view; the sync tree removes it once the
/// last listener leaves.
struct SyncPoint: Sendable {
    /// In creation order, which is the order they raise events in.
    private(set) var views: [View] = []

    var isEmpty: Bool { views.isEmpty }

    /// The view for a query identifier.
    func view(id: String) -> View? { views.first { $0.queryID == id } }

    /// The view serving `query`: any view of all the data serves a query that loads all data
    /// (an order alone changes only the event order, which each view handles itself).
    func view(for query: Query) -> View? {
        query.loadsAllData ? completeView : view(id: query.identifier)
    }

    /// A view of all the data here, if any.
    var completeView: View? { views.first { $0.query.loadsAllData } }

    var hasCompleteView: Bool { completeView != nil }

    /// The views of filtered queries (those that need their own server listen).
    var queryViews: [View] { views.filter { !$0.query.loadsAllData } }

    /// The server data at `relativePath` if some view here knows all of it.
    func completeServerCache(at relativePath: Path) -> Node? {
        for view in views {
            if let node = view.completeServerCache(at: relativePath) { return node }
        }
        return nil
    }

    /// Passes an operation to the views: a tagged one only to its query's view.
    mutating func apply(_ operation: SyncOperation, writes: WriteTreeRef, completeServerCache: Node?) -> [Event] {
        if let queryID = operation.source.queryID {
            guard let index = views.firstIndex(where: { $0.queryID == queryID }) else { return [] }
            return views[index].apply(operation, writes: writes, completeServerCache: completeServerCache)
        }
        var events: [Event] = []
        for index in views.indices {
            events += views[index].apply(operation, writes: writes, completeServerCache: completeServerCache)
        }
        return events
    }

    /// A new view for `query`, its caches filled from what is known: the server cache given, and
    /// an event cache of that data with the pending writes applied.
    static func makeView(
        path: Path,
        query: Query,
        writes: WriteTreeRef,
        serverCache: Node,
        serverCacheComplete: Bool
    ) -> View {
        var eventComplete = true
        var eventNode = writes.completeEventCache(serverCache: serverCacheComplete ? serverCache : nil)
        if eventNode == nil {
            eventComplete = false
            eventNode = serverCache.isLeaf ? .empty : writes.completeEventChildren(serverChildren: serverCache)
        }
        let cache = ViewCache(
            eventCache: CacheNode(eventNode ?? .empty, fullyInitialized: eventComplete, filtered: false),
            serverCache: CacheNode(serverCache, fullyInitialized: serverCacheComplete, filtered: false))
        return View(path: path, query: query, initialCache: cache)
    }

    /// Adds a registration, creating the query's view if needed; returns its initial events.
    mutating func add(
        _ registration: RegistrationID,
        path: Path,
        query: Query,
        writes: WriteTreeRef,
        serverCache: Node,
        serverCacheComplete: Bool
    ) -> [Event] {
        let id = query.identifier
        let index: Int
        if let existing = views.firstIndex(where: { $0.queryID == id }) {
            index = existing
        } else {
            views.append(
                SyncPoint.makeView(
                    path: path, query: query, writes: writes, serverCache: serverCache,
                    serverCacheComplete: serverCacheComplete))
            index = views.count - 1
        }
        views[index].add(registration)
        return views[index].initialEvents(for: registration)
    }

    /// What removing registrations did: the queries whose views went away and need no listen any
    /// more, and `cancelled` events when the removal was a cancellation.
    struct Removal {
        var removedQueries: [(path: Path, query: Query)] = []
        var events: [Event] = []
    }

    /// Removes `registration` (all registrations when nil) from the query's view, or from every
    /// view when `query` is the default query (as `off()` on a plain reference does). A cancelled
    /// default listen takes only the views it serves, those of all the data: a filtered query
    /// here is a query of its own and stays.
    mutating func remove(_ registration: RegistrationID?, path: Path, query: Query, cancel: Bool) -> Removal {
        var removal = Removal()
        let hadCompleteView = hasCompleteView
        let id = query.identifier
        let isDefault = id == Query.all.identifier
        var index = 0
        while index < views.count {
            let matches = isDefault ? !cancel || views[index].query.loadsAllData : views[index].queryID == id
            guard matches else {
                index += 1
                continue
            }
            let removed = views[index].remove(registration)
            if cancel { removal.events += views[index].cancelEvents(for: removed) }
            if views[index].isEmpty {
                let view = views.remove(at: index)
                // Views of all the data are dealt with below, once for the location.
                if !view.query.loadsAllData { removal.removedQueries.append((path, view.query)) }
            } else {
                index += 1
            }
        }
        if hadCompleteView && !hasCompleteView {
            // The last view of all the data went: its default listen is no longer needed.
            removal.removedQueries.append((path, .all))
        }
        return removal
    }
}
