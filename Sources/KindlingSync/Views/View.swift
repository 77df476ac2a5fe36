import KindlingCore

/// One query at one location with its listeners: the caches that query needs and the events its
/// listeners get.
///
/// All listeners of the same query at the same location share a view, so data is cached and
/// filtered once however many callbacks there are.
struct View: Sendable {
    let path: Path
    let query: Query
    /// The query's identifier, the view's key within its sync point.
    let queryID: String
    let processor: ViewProcessor
    private(set) var cache: ViewCache
    /// The event cache's children in query order, for previous-sibling names.
    private(set) var order: ChildOrder
    /// In the order they were added, which is the order they get events in.
    private(set) var registrations: [RegistrationID] = []

    /// A view starting from the given caches: the server cache is kept whole (the server filters
    /// a query's data itself), the event cache goes through the query's filter.
    init(path: Path, query: Query, initialCache: ViewCache) {
        self.path = path
        self.query = query
        self.queryID = query.identifier
        let filter: any NodeFilter
        if query.loadsAllData {
            filter = IndexedFilter(index: query.index)
        } else if let limit = query.limit {
            filter = LimitedFilter(query: query, limit: limit)
        } else {
            filter = RangedFilter(query: query)
        }
        processor = ViewProcessor(filter: filter)
        let eventNode = ViewProcessor.discarding {
            filter.updateFullNode(.empty, initialCache.eventCache.node, changes: &$0)
        }
        cache = ViewCache(
            eventCache: CacheNode(
                eventNode, fullyInitialized: initialCache.eventCache.isFullyInitialized, filtered: filter.filtersNodes),
            serverCache: CacheNode(
                initialCache.serverCache.node, fullyInitialized: initialCache.serverCache.isFullyInitialized,
                filtered: false))
        order = ChildOrder(index: query.index, node: eventNode)
    }

    var isEmpty: Bool { registrations.isEmpty }

    /// The server data this view holds (complete or not); its hash goes with the listen.
    var serverNode: Node { cache.serverCache.node }

    /// The data at `relativePath` when this view knows all of it: any path for a view of all the
    /// data, only cached children for a query.
    func completeServerCache(at relativePath: Path) -> Node? {
        guard let cached = cache.completeServerSnap else { return nil }
        if query.loadsAllData { return cached.child(at: relativePath) }
        if let front = relativePath.first, cached.hasChild(front) { return cached.child(at: relativePath) }
        return nil
    }

    mutating func add(_ registration: RegistrationID) { registrations.append(registration) }

    /// Removes the first registration with this id, or all of them when `registration` is nil;
    /// returns the ones removed.
    mutating func remove(_ registration: RegistrationID?) -> [RegistrationID] {
        guard let registration else {
            defer { registrations = [] }
            return registrations
        }
        guard let index = registrations.firstIndex(of: registration) else { return [] }
        registrations.remove(at: index)
        return [registration]
    }

    /// Applies an operation and returns the events for every registration.
    mutating func apply(_ operation: SyncOperation, writes: WriteTreeRef, completeServerCache: Node?) -> [Event] {
        let result = processor.apply(operation, to: cache, writes: writes, completeCache: completeServerCache)
        cache = result.viewCache
        let eventNode = result.viewCache.eventCache.node
        order.update(with: result.changes, node: eventNode)
        return events(for: result.changes, registrations: registrations)
    }

    /// The events a new registration gets at once: a `childAdded` for every child shown, and the
    /// value when it is known.
    func initialEvents(for registration: RegistrationID) -> [Event] {
        let eventCache = cache.eventCache
        var changes: [ChildChange] = eventCache.node.children.map { .added($0.key, $0.node) }
        if eventCache.isFullyInitialized { changes.append(.value(eventCache.node)) }
        return events(for: changes, registrations: [registration])
    }

    private func events(for changes: [ChildChange], registrations: [RegistrationID]) -> [Event] {
        let eventNode = cache.eventCache.node
        return EventGenerator(path: path, query: query).events(for: changes, registrations: registrations) {
            order.predecessor(of: $0, $1, in: eventNode)
        }
    }

    /// `cancelled` events for the given registrations.
    func cancelEvents(for removed: [RegistrationID]) -> [Event] {
        removed.map { Event(registration: $0, kind: .cancelled, path: path, query: query) }
    }
}
