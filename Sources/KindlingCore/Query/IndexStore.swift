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

    /// Brings every index in step with a write that turned `old` (the root before) into `new`.
    public mutating func apply(_ write: Write, old: Node, new: Node) {
        switch write {
        case .set(let path, _):
            applyChange(at: path, old: old, new: new)
        case .merge(let path, let entries):
            for entry in entries { applyChange(at: path.appending(entry.path), old: old, new: new) }
        }
    }

    private mutating func applyChange(at written: Path, old: Node, new: Node) {
        guard !locations.isEmpty else { return }
        // Indexes above the write: one child of theirs changed.
        var above: [Path] = []
        locations.forEachOnPath(written) { path, _ in if path.count < written.count { above.append(path) } }
        for path in above {
            let key = written.keys[path.count]
            let childPath = path.child(key)
            let before = old.child(at: childPath)
            let after = new.child(at: childPath)
            // Changed in place: a copy of the location would share, and so copy, every page touched.
            locations.update(path) { location in
                // An array of the orders, not the keys view: the view would share the dictionary.
                let orders = location.map { Array($0.indexes.keys) } ?? []
                for index in orders { location!.indexes[index]!.update(key, from: before, to: after) }
            }
        }
        // Indexes at or below the write: their whole location was replaced.
        guard let replaced = locations.subtree(at: written) else { return }
        var rebuilt: [Path] = []
        replaced.forEach { relative, _ in rebuilt.append(written.appending(relative)) }
        for path in rebuilt {
            let data = new.child(at: path)
            locations.update(path) { location in
                let orders = location.map { Array($0.indexes.keys) } ?? []
                for index in orders { location!.indexes[index] = SortedIndex(index, over: data) }
            }
        }
    }
}
