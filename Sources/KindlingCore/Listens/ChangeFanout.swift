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
        var covered: Set<Subscriber> = []
        var coveredOrder: [Subscriber] = []
        listens.forEachOnPath(written) { path, location in
            for subscriber in location.plain where covered.insert(subscriber).inserted { coveredOrder.append(subscriber) }
            if !location.queries.isEmpty { queryPaths.append(path) }
        }
        if !coveredOrder.isEmpty, let change = writtenChange() {
            deliveries.append(Delivery(change: change, recipients: coveredOrder.map { .init(subscriber: $0, tag: nil) }))
        }

        // Listens below the write get their own location's new data, if it changed.
        listens.subtree(at: written)?.forEachBelow { relative, location in
            let path = written.appending(relative)
            if !location.queries.isEmpty { queryPaths.append(path) }
            let recipients = location.plain.filter { !covered.contains($0) }
            guard !recipients.isEmpty else { return }
            let after = new.child(at: path)
            guard old.child(at: path) != after else { return }
            deliveries.append(Delivery(change: .put(path, after), recipients: recipients.map { .init(subscriber: $0, tag: nil) }))
        }

        // Filtered queries get their new window, tagged, when it changed.
        for path in queryPaths {
            let data = new.child(at: path)
            listens.update(path) { location in
                guard var current = location else { return }
                for (query, var view) in current.queries {
                    let window = indexes.window(query, at: path, data: data)
                    guard !view.sameWindow(window) else { continue }
                    view.window = window
                    current.queries[query] = view
                    let node = Node(children: window.lazy.map { ($0.key, $0.node) })
                    deliveries.append(Delivery(change: .put(path, node), recipients: view.recipients))
                }
                location = current
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
