/// Works out, for one write, the deliveries to the listens it affects, in two steps around the
/// write itself.
///
/// `init` runs before the write is applied: it finds the affected listens through the path tree
/// (O(depth + affected listens), never O(all listens); for a multi-location update, only those
/// on the way to and below its entries) and keeps the old data of just those
/// locations. Keeping only those, rather than a snapshot of the whole root, lets the write itself
/// change the tree in place. `deliveries` runs after, comparing old and new.
struct ChangeFanout<Subscriber: Hashable & Sendable> {
    typealias Recipient = Delivery<Subscriber>.Recipient

    private let write: Write
    /// Subscribers with a plain listen at or above the write: they get the write itself.
    private let covered: [Subscriber: Int]
    /// The old data at the written locations (the set's path, or each merge entry's), kept only
    /// when someone is covered.
    private let oldWritten: [Node]
    /// Plain listens below the write, with the subscribers not already covered and their old data.
    private let below: [(path: Path, subscribers: [Subscriber], old: Node)]
    /// Locations with filtered queries on or below the written path.
    private let queryPaths: [Path]

    init(write: Write, listens: PathTree<LocationListens<Subscriber>>, old: Node) {
        self.write = write
        let written = write.path
        var onPath: [[Subscriber: Int]] = []
        var queryPaths: [Path] = []
        listens.forEachOnPath(written) { path, location in
            if !location.plain.isEmpty { onPath.append(location.plain) }
            if !location.queries.isEmpty { queryPaths.append(path) }
        }
        let covered = onPath.count == 1 ? onPath[0] : onPath.reduce(into: [Subscriber: Int]()) { $0.merge($1) { a, _ in a } }
        var below: [(path: Path, subscribers: [Subscriber], old: Node)] = []
        func visit(_ path: Path, _ location: LocationListens<Subscriber>) {
            if !location.queries.isEmpty { queryPaths.append(path) }
            let subscribers = location.plain.keys.filter { covered[$0] == nil }
            if !subscribers.isEmpty { below.append((path, subscribers, old.child(at: path))) }
        }
        switch write {
        case .set:
            listens.subtree(at: written)?.forEachBelow { relative, location in visit(written.appending(relative), location) }
        case .merge(_, let entries):
            // Only the listens on the way down to each entry and below it, not every listen under
            // the update's path: an update at `/chat` must not visit every conversation's listeners.
            var seen = Set<Path>()
            for entry in entries {
                let target = written.appending(entry.path)
                listens.forEachOnPath(target) { path, location in
                    if path.count > written.count, seen.insert(path).inserted { visit(path, location) }
                }
                listens.subtree(at: target)?.forEachBelow { relative, location in
                    let path = target.appending(relative)
                    if seen.insert(path).inserted { visit(path, location) }
                }
            }
        }
        self.covered = covered
        self.oldWritten = covered.isEmpty ? [] : ChangeFanout.writtenPaths(write).map { old.child(at: $0) }
        self.below = below
        self.queryPaths = queryPaths
    }

    /// True when no listen is affected, so the caller can skip the second step.
    var isEmpty: Bool { covered.isEmpty && below.isEmpty && queryPaths.isEmpty }

    /// The deliveries, given the tree after the write; refreshes the windows of queries, keeping
    /// `windowEntries` (the children all windows hold) in step.
    func deliveries(
        _ listens: inout PathTree<LocationListens<Subscriber>>, new: Node, indexes: IndexStore, windowEntries: inout Int
    ) -> [Delivery<Subscriber>] {
        var deliveries: [Delivery<Subscriber>] = []
        if !covered.isEmpty, let change = writtenChange(new: new) {
            var recipients: [Recipient] = []
            recipients.reserveCapacity(covered.count)
            for subscriber in covered.keys { recipients.append(Recipient(subscriber: subscriber, tag: nil)) }
            deliveries.append(Delivery(change: change, recipients: recipients))
        }
        for listen in below {
            guard let change = change(below: listen.path, old: listen.old, new: new) else { continue }
            deliveries.append(Delivery(change: change, recipients: listen.subscribers.map { Recipient(subscriber: $0, tag: nil) }))
        }
        for path in queryPaths {
            let data = new.child(at: path)
            listens.update(path) { location in
                // An array of the queries, not the keys view: the view would share the dictionary.
                let queries = location.map { Array($0.queries.keys) } ?? []
                for query in queries {
                    let window = indexes.window(query, at: path, data: data)
                    guard !location!.queries[query]!.sameWindow(window) else { continue }
                    windowEntries += window.count - location!.queries[query]!.window.count
                    location!.queries[query]!.window = window
                    let node = Node(children: window.lazy.map { ($0.key, $0.node) })
                    deliveries.append(Delivery(change: .put(path, node), recipients: location!.queries[query]!.recipients))
                }
            }
        }
        return deliveries
    }

    /// What a plain listen below the written path must hear: its whole new data when the write
    /// replaced its location (a set, or a merge entry at or above it), else just the merge
    /// entries that changed inside it, relative to it (a multi-location update near the root
    /// must not resend a listener everything it already has). Nil when nothing it holds changed.
    private func change(below location: Path, old: Node, new: Node) -> Delivery<Subscriber>.Change? {
        if case .merge(let path, let entries) = write {
            var inside: [MergeEntry] = []
            var replaced = false
            for entry in entries {
                let written = path.appending(entry.path)
                if written.contains(location) {
                    replaced = true
                    break
                }
                guard let relative = location.relative(written) else { continue }
                let after = new.child(at: written)
                if old.child(at: relative) != after { inside.append(MergeEntry(path: relative, node: after)) }
            }
            if !replaced { return inside.isEmpty ? nil : .merge(location, inside) }
        }
        let after = new.child(at: location)
        return old != after ? .put(location, after) : nil
    }

    /// The locations a write replaces.
    private static func writtenPaths(_ write: Write) -> [Path] {
        switch write {
        case .set(let path, _): return [path]
        case .merge(let path, let entries): return entries.map { path.appending($0.path) }
        }
    }

    /// The write as a change, or nil when it changed nothing.
    private func writtenChange(new: Node) -> Delivery<Subscriber>.Change? {
        let paths = ChangeFanout.writtenPaths(write)
        let after = paths.map { new.child(at: $0) }
        guard zip(oldWritten, after).contains(where: { $0 != $1 }) else { return nil }
        switch write {
        case .set(let path, _):
            return .put(path, after[0])
        case .merge(let path, let entries):
            return .merge(path, zip(entries, after).map { MergeEntry(path: $0.path, node: $1) })
        }
    }
}
