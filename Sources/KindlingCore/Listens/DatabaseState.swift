/// One database: its tree, its indexes and its listens, and the rule that turns each committed
/// write into what every affected listener must be sent.
///
/// A pure value with no I/O and no suspension: the server keeps one per namespace on one serial
/// executor, so each operation is atomic by construction, and tests drive it directly.
public struct DatabaseState<Subscriber: Hashable & Sendable>: Sendable {
    /// The data.
    public private(set) var tree = DataTree()
    /// The sorted indexes queries use.
    public private(set) var indexes = IndexStore()
    private var listens = PathTree<LocationListens<Subscriber>>()
    private var subscriptions: [Subscriber: Set<ListenID>] = [:]
    /// Filtered query listens served as plain ones (`listenUnindexed`), by subscriber.
    private var unindexed: [Subscriber: Set<ListenID>] = [:]
    /// The number of listens registered (kept as they come and go, so reading it costs nothing).
    public private(set) var listenCount = 0
    /// Children held in the windows of query listens, across the database. Each window is kept
    /// and recomputed on every write at its location, so a query listen whose window would take
    /// the total past `maxWindowEntries` is refused: a client listening with thousands of large
    /// ranges (sending the hash of each, so nothing is sent back) would otherwise hold the
    /// server's memory, and every write's time there.
    public private(set) var windowEntries = 0
    /// The most children the windows of query listens may hold together.
    public let maxWindowEntries: Int

    public init(root: Node = .empty, maxWindowEntries: Int = 4_000_000) {
        tree = DataTree(root: root)
        self.maxWindowEntries = maxWindowEntries
    }

    /// What a query at `path` returns now (the whole location for a plain query).
    @_specialize(exported:true,where Subscriber == SubscriberID)
    public func read(_ path: Path, query: Query = .all) -> Node {
        let data = tree.node(at: path)
        if query.loadsAllData { return data }
        return indexes.result(query, at: path, data: data)
    }

    /// How many children answering `query` at `path` reads one by one: none when the query
    /// loads the whole location, orders by key, or has a kept index; else every child there.
    @_specialize(exported:true,where Subscriber == SubscriberID)
    public func scanCost(_ path: Path, query: Query) -> Int {
        guard !query.loadsAllData, query.index != .key, indexes.index(query.index, at: path) == nil else { return 0 }
        return tree.node(at: path).children.count
    }

    /// Keeps an index for `.indexOn` at `path`.
    @_specialize(exported:true,where Subscriber == SubscriberID)
    public mutating func declareIndex(_ index: Index, at path: Path) {
        indexes.retain(index, at: path, data: tree.node(at: path), declared: true)
    }

    /// Gives back the hold of an `.indexOn` that new rules no longer make.
    @_specialize(exported:true,where Subscriber == SubscriberID)
    public mutating func releaseDeclaredIndex(_ index: Index, at path: Path) {
        indexes.release(index, at: path)
    }

    /// Registers a listen and returns the data to send before acknowledging it: the location's
    /// data for a plain listen, the query's window (tagged) for a filtered one. Listening again
    /// with the same path and query replaces the tag. Nil, registering nothing, when the query
    /// needs a new index the index budget cannot take (see `IndexStore`); an index the rules
    /// declare (`declaredIndex`, under a wildcard) is always built.
    @_specialize(exported:true,where Subscriber == SubscriberID)
    public mutating func listen(
        _ subscriber: Subscriber, at path: Path, query: Query = .all, tag: Int? = nil, declaredIndex: Bool = false
    ) -> Delivery<Subscriber>? {
        let id = ListenID(path: path, query: query)
        if unindexed[subscriber]?.contains(id) == true { return listenUnindexed(subscriber, at: path, query: query) }
        let isNewQuery = !id.isPlain && listens[path]?.queries[query] == nil
        var newWindow: [(key: Key, node: Node)] = []
        if isNewQuery {
            let data = tree.node(at: path)
            guard indexes.retain(query.index, at: path, data: data, declared: declaredIndex) else { return nil }
            newWindow = indexes.window(query, at: path, data: data)
            guard windowEntries + newWindow.count <= maxWindowEntries else {
                indexes.release(query.index, at: path)
                return nil
            }
            windowEntries += newWindow.count
        }
        let before = subscriptions[subscriber]?.count ?? 0
        if subscriptions[subscriber, default: []].insert(id).inserted { listenCount += 1 }
        if id.isPlain {
            let isNew = subscriptions[subscriber]!.count > before
            listens.update(path) { location in
                if location == nil { location = LocationListens() }
                if isNew { location!.plain[subscriber, default: 0] += 1 }
            }
            return Delivery(change: .put(path, tree.node(at: path)), recipients: [.init(subscriber: subscriber, tag: nil)])
        }
        let window: [(key: Key, node: Node)] = listens.update(path) { location in
            if location == nil { location = LocationListens() }
            if isNewQuery { location!.queries[query] = QueryView(window: newWindow) }
            location!.queries[query]!.tags[subscriber] = tag
            return location!.queries[query]!.window
        }
        let node = Node(children: window.lazy.map { ($0.key, $0.node) })
        return Delivery(change: .put(path, node), recipients: [.init(subscriber: subscriber, tag: tag)])
    }

    /// Registers a filtered query as a plain listen at its location, as Firebase serves a query
    /// without an index ("no_index"): the subscriber gets the location's whole data and every
    /// change there untagged, and filters it itself. For a query whose index `listen` could
    /// not keep, when the caller may read the whole location. No index and no window is kept
    /// for it, so it is outside their budgets; `unlisten` with the query removes it.
    @_specialize(exported:true,where Subscriber == SubscriberID)
    public mutating func listenUnindexed(_ subscriber: Subscriber, at path: Path, query: Query) -> Delivery<Subscriber> {
        let id = ListenID(path: path, query: query)
        if subscriptions[subscriber, default: []].insert(id).inserted {
            listenCount += 1
            unindexed[subscriber, default: []].insert(id)
            listens.update(path) { location in
                if location == nil { location = LocationListens() }
                location!.plain[subscriber, default: 0] += 1
            }
        }
        return Delivery(change: .put(path, tree.node(at: path)), recipients: [.init(subscriber: subscriber, tag: nil)])
    }

    /// True when `subscriber`'s listen `id` is served as a plain listen (`listenUnindexed`).
    @_specialize(exported:true,where Subscriber == SubscriberID)
    public func servesUnindexed(_ subscriber: Subscriber, _ id: ListenID) -> Bool {
        unindexed[subscriber]?.contains(id) == true
    }

    /// Removes one listen (no effect if it is not registered).
    @_specialize(exported:true,where Subscriber == SubscriberID)
    public mutating func unlisten(_ subscriber: Subscriber, at path: Path, query: Query = .all) {
        let id = ListenID(path: path, query: query)
        guard subscriptions[subscriber]?.remove(id) != nil else { return }
        listenCount -= 1
        if subscriptions[subscriber]?.isEmpty == true { subscriptions[subscriber] = nil }
        remove(subscriber, id)
    }

    /// Removes every listen of a subscriber that went away.
    @_specialize(exported:true,where Subscriber == SubscriberID)
    public mutating func removeSubscriber(_ subscriber: Subscriber) {
        guard let ids = subscriptions.removeValue(forKey: subscriber) else { return }
        listenCount -= ids.count
        for id in ids { remove(subscriber, id) }
    }

    private mutating func remove(_ subscriber: Subscriber, _ id: ListenID) {
        var servedPlain = id.isPlain
        if !servedPlain, unindexed[subscriber]?.remove(id) != nil {
            servedPlain = true
            if unindexed[subscriber]?.isEmpty == true { unindexed[subscriber] = nil }
        }
        var releasedIndex = false
        listens.update(id.path) { location in
            guard location != nil else { return }
            if servedPlain {
                let remaining = (location!.plain[subscriber] ?? 1) - 1
                location!.plain[subscriber] = remaining > 0 ? remaining : nil
            } else if location!.queries[id.query] != nil {
                location!.queries[id.query]!.tags[subscriber] = nil
                if location!.queries[id.query]!.tags.isEmpty {
                    windowEntries -= location!.queries.removeValue(forKey: id.query)?.window.count ?? 0
                    releasedIndex = true
                }
            }
            if location!.isEmpty { location = nil }
        }
        if releasedIndex { indexes.release(id.query.index, at: id.path) }
    }

    /// Applies a resolved write and returns what each affected listener must receive. Only
    /// listens whose data changed get anything; a subscriber with several overlapping plain
    /// listens gets one copy.
    ///
    /// Only the old data of the affected locations is kept across the write, not the old root,
    /// so a write that no listen or index watches changes the tree in place.
    @_specialize(exported:true,where Subscriber == SubscriberID)
    public mutating func commit(_ write: Write) -> [Delivery<Subscriber>] {
        let indexPlan = indexes.plan(write, old: tree.root)
        let fanout = listens.isEmpty ? nil : ChangeFanout(write: write, listens: listens, old: tree.root)
        tree.apply(write)
        if !indexPlan.isEmpty { indexes.apply(indexPlan, new: tree.root) }
        guard let fanout, !fanout.isEmpty else { return [] }
        return fanout.deliveries(&listens, new: tree.root, indexes: indexes, windowEntries: &windowEntries)
    }
}
