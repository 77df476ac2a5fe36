/// The sorted indexes of one database, per location and order, kept current on every write.
///
/// An index exists while something wants it: an `.indexOn` declaration, or a query listen that
/// uses its order. Each holder is counted, so the last one to leave drops the index.
///
/// Each index holds an entry per child of its location, and a query listen with a new order
/// builds one: a client could otherwise listen with thousands of orders on a large location and
/// hold the server's memory (and every write's time) with indexes. So an index built for a query
/// must fit a budget of entries across the database, and a location keeps at most
/// `maxQueryIndexesPerLocation` orders; declared ones are always built.
public struct IndexStore: Sendable {
    private struct Location: Sendable {
        var indexes: [Index: SortedIndex] = [:]
        var holders: [Index: Int] = [:]
    }

    private var locations = PathTree<Location>()
    /// Entries across all indexes.
    public private(set) var entryCount = 0
    /// The most entries an index built for a query may bring the database to.
    public let maxEntries: Int
    /// The most orders one location keeps indexes of, for queries.
    public static let maxQueryIndexesPerLocation = 16

    public init(maxEntries: Int = 8_000_000) {
        self.maxEntries = maxEntries
    }

    /// Takes a hold on the index of `index` order at `path`, building it from `data` (the data
    /// now at `path`) when it is new. The key order needs no index. A new index for a query
    /// (not `declared`) past the budget is not built, and false returned.
    @discardableResult
    public mutating func retain(_ index: Index, at path: Path, data: Node, declared: Bool = false) -> Bool {
        guard index != .key else { return true }
        let built: Bool = locations.update(path) { location in
            if location == nil { location = Location() }
            if location!.indexes[index] == nil {
                let fits = location!.indexes.count < Self.maxQueryIndexesPerLocation && entryCount + data.children.count <= maxEntries
                guard declared || fits else {
                    if location!.indexes.isEmpty { location = nil }
                    return false
                }
                let sorted = SortedIndex(index, over: data)
                entryCount += sorted.count
                location!.indexes[index] = sorted
            }
            location!.holders[index, default: 0] += 1
            return true
        }
        return built
    }

    /// Gives up one hold; the index goes when none is left.
    public mutating func release(_ index: Index, at path: Path) {
        guard index != .key else { return }
        locations.update(path) { location in
            guard var current = location, let holders = current.holders[index] else { return }
            if holders > 1 {
                current.holders[index] = holders - 1
            } else {
                current.holders[index] = nil
                entryCount -= current.indexes.removeValue(forKey: index)?.count ?? 0
            }
            location = current.indexes.isEmpty ? nil : current
        }
    }

    /// The index of `index` order at `path`, if one is kept.
    public func index(_ index: Index, at path: Path) -> SortedIndex? {
        locations[path]?.indexes[index]
    }

    /// The query's window over `data`, the data at `path`: from an index when one is kept.
    public func window(_ query: Query, at path: Path, data: Node) -> [(key: Key, node: Node)] {
        if let sorted = index(query.index, at: path), !data.isLeaf { return sorted.window(query) }
        return query.window(of: data)
    }

    /// The query's result over `data`, the data at `path`, as a node (see `Query.result`).
    public func result(_ query: Query, at path: Path, data: Node) -> Node {
        if let sorted = index(query.index, at: path), !data.isLeaf, !query.loadsAllData {
            return Node(children: sorted.window(query).lazy.map { ($0.key, $0.node) })
        }
        return query.result(of: data)
    }

    /// What a write will change in the indexes, found before the write is applied: for each
    /// index location above a written path, the child that changes and its old data; and the
    /// index locations at or below a written path, which are rebuilt.
    public struct ChangePlan: Sendable {
        fileprivate var children: [(location: Path, key: Key, old: Node)] = []
        fileprivate var replaced: [Path] = []

        public var isEmpty: Bool { children.isEmpty && replaced.isEmpty }
    }

    /// Prepares `apply` for `write`, reading old data from `old` (the root before the write).
    public func plan(_ write: Write, old: Node) -> ChangePlan {
        var plan = ChangePlan()
        guard !locations.isEmpty else { return plan }
        let written: [Path]
        switch write {
        case .set(let path, _): written = [path]
        case .merge(let path, let entries): written = entries.map { path.appending($0.path) }
        }
        for path in written {
            locations.forEachOnPath(path) { location, _ in
                guard location.count < path.count else { return }
                let key = path.keys[location.count]
                plan.children.append((location, key, old.child(at: location.child(key))))
            }
            locations.subtree(at: path)?.forEach { relative, _ in plan.replaced.append(path.appending(relative)) }
        }
        return plan
    }

    /// Brings every index in step with a planned write, given `new`, the root after it.
    public mutating func apply(_ plan: ChangePlan, new: Node) {
        for change in plan.children {
            let after = new.child(at: change.location.child(change.key))
            // Changed in place: a copy of the location would share, and so copy, every page touched.
            locations.update(change.location) { location in
                // An array of the orders, not the keys view: the view would share the dictionary.
                let orders = location.map { Array($0.indexes.keys) } ?? []
                for index in orders {
                    let before = location!.indexes[index]!.count
                    location!.indexes[index]!.update(change.key, from: change.old, to: after)
                    entryCount += location!.indexes[index]!.count - before
                }
            }
        }
        for path in plan.replaced {
            let data = new.child(at: path)
            locations.update(path) { location in
                let orders = location.map { Array($0.indexes.keys) } ?? []
                for index in orders {
                    let rebuilt = SortedIndex(index, over: data)
                    entryCount += rebuilt.count - (location!.indexes[index]?.count ?? 0)
                    location!.indexes[index] = rebuilt
                }
            }
        }
    }

    /// Brings every index in step with a write that turned `old` (the root before) into `new`.
    public mutating func apply(_ write: Write, old: Node, new: Node) {
        apply(plan(write, old: old), new: new)
    }
}
