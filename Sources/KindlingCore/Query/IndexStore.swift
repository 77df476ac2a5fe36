/// The sorted indexes of one database, per location and order, kept current on every write.
///
/// An index exists while something wants it: an `.indexOn` declaration, or a query listen that
/// uses its order. Each holder is counted, so the last one to leave drops the index.
public struct IndexStore: Sendable {
    private struct Location: Sendable {
        var indexes: [Index: SortedIndex] = [:]
        var holders: [Index: Int] = [:]
    }

    private var locations = PathTree<Location>()

    public init() {}

    /// Takes a hold on the index of `index` order at `path`, building it from `data` (the data
    /// now at `path`) when it is new. The key order needs no index.
    public mutating func retain(_ index: Index, at path: Path, data: Node) {
        guard index != .key else { return }
        locations.update(path) { location in
            if location == nil { location = Location() }
            location!.holders[index, default: 0] += 1
            if location!.indexes[index] == nil { location!.indexes[index] = SortedIndex(index, over: data) }
        }
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
                current.indexes[index] = nil
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
                for index in orders { location!.indexes[index]!.update(change.key, from: change.old, to: after) }
            }
        }
        for path in plan.replaced {
            let data = new.child(at: path)
            locations.update(path) { location in
                let orders = location.map { Array($0.indexes.keys) } ?? []
                for index in orders { location!.indexes[index] = SortedIndex(index, over: data) }
            }
        }
    }

    /// Brings every index in step with a write that turned `old` (the root before) into `new`.
    public mutating func apply(_ write: Write, old: Node, new: Node) {
        apply(plan(write, old: old), new: new)
    }
}
