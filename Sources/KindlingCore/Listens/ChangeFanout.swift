/// Works out, for one committed write, the deliveries to the listens it affects.
///
/// Only listens on the written path (at or above it) and below it are visited, through the
/// path tree, so the cost is O(depth + affected listens), never O(all listens).
struct ChangeFanout<Subscriber: Hashable & Sendable> {
    let write: Write
    let old: Node
    let new: Node
    let indexes: IndexStore

    func deliveries(_ listens: inout PathTree<LocationListens<Subscriber>>) -> [Delivery<Subscriber>] {
        let written = write.path
        var deliveries: [Delivery<Subscriber>] = []
        var queryPaths: [Path] = []

        // Plain listens at or above the write get the write itself, once per subscriber.
        var onPath: [Set<Subscriber>] = []
        listens.forEachOnPath(written) { path, location in
            if !location.plain.isEmpty { onPath.append(location.plain) }
            if !location.queries.isEmpty { queryPaths.append(path) }
        }
        let covered = onPath.count == 1 ? onPath[0] : onPath.reduce(into: Set<Subscriber>()) { $0.formUnion($1) }
        if !covered.isEmpty, let change = writtenChange() {
            var recipients: [Delivery<Subscriber>.Recipient] = []
            recipients.reserveCapacity(covered.count)
            for subscriber in covered { recipients.append(.init(subscriber: subscriber, tag: nil)) }
            deliveries.append(Delivery(change: change, recipients: recipients))
        }

        // Listens below the write get their own location's new data, if it changed.
        listens.subtree(at: written)?.forEachBelow { relative, location in
            let path = written.appending(relative)
            if !location.queries.isEmpty { queryPaths.append(path) }
            let recipients = covered.isEmpty ? location.plain : location.plain.subtracting(covered)
            guard !recipients.isEmpty else { return }
            let after = new.child(at: path)
            guard old.child(at: path) != after else { return }
            deliveries.append(Delivery(change: .put(path, after), recipients: recipients.map { .init(subscriber: $0, tag: nil) }))
        }

        // Filtered queries get their new window, tagged, when it changed.
        for path in queryPaths {
            let data = new.child(at: path)
            listens.update(path) { location in
                // An array of the queries, not the keys view: the view would share the dictionary.
                let queries = location.map { Array($0.queries.keys) } ?? []
                for query in queries {
                    let window = indexes.window(query, at: path, data: data)
                    guard !location!.queries[query]!.sameWindow(window) else { continue }
                    location!.queries[query]!.window = window
                    let node = Node(children: window.lazy.map { ($0.key, $0.node) })
                    deliveries.append(Delivery(change: .put(path, node), recipients: location!.queries[query]!.recipients))
                }
            }
        }
        return deliveries
    }

    /// The write as a change, or nil when it changed nothing.
    private func writtenChange() -> Delivery<Subscriber>.Change? {
        switch write {
        case .set(let path, _):
            let after = new.child(at: path)
            return old.child(at: path) == after ? nil : .put(path, after)
        case .merge(let path, let entries):
            let changed = entries.contains { old.child(at: path.appending($0.path)) != new.child(at: path.appending($0.path)) }
            guard changed else { return nil }
            let resolved = entries.map { MergeEntry(path: $0.path, node: new.child(at: path.appending($0.path))) }
            return .merge(path, resolved)
        }
    }
}
