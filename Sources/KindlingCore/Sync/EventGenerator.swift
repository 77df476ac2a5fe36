/// Turns a view's changes into events for its registrations, in the order the SDKs raise them.
///
/// By kind first (removed, added, moved, changed, value), then by the query's order within a
/// kind, then registration by registration. A child whose change moved it in the order gets a
/// `childMoved` besides its `childChanged`. Previous-sibling names are read from the new event
/// cache, so each event says where the child now sits.
struct EventGenerator: Sendable {
    let path: Path
    let query: Query

    func events(for changes: [ChildChange], eventCache: Node, registrations: [RegistrationID]) -> [Event] {
        let index = query.index
        var moves: [ChildChange] = []
        for change in changes where change.kind == .childChanged {
            if let key = change.key, let old = change.oldNode, index.indexedValueChanged(old, change.node) {
                moves.append(.moved(key, change.node))
            }
        }
        let previousSibling = EventGenerator.previousSiblingLookup(
            in: eventCache, index: index,
            lookups: changes.count { $0.kind == .childAdded || $0.kind == .childChanged } + moves.count)
        var events: [Event] = []
        for kind in [EventKind.childRemoved, .childAdded, .childMoved, .childChanged, .value] {
            var ofKind = (kind == .childMoved ? moves : changes).filter { $0.kind == kind }
            if kind != .value {
                ofKind.sort { index.compare(($0.key ?? Key.priority, $0.node), ($1.key ?? Key.priority, $1.node)) < 0 }
            }
            for change in ofKind {
                var previous: Key?
                if kind != .value && kind != .childRemoved, let key = change.key {
                    previous = previousSibling(key, change.node)
                }
                for registration in registrations {
                    events.append(
                        Event(
                            registration: registration, kind: kind, path: path, query: query, childKey: change.key,
                            node: change.node, previousSibling: previous))
                }
            }
        }
        return events
    }

    /// Finds previous siblings in the new event cache. One change scans the children; many
    /// changes (a new listener on a long list gets a `childAdded` per child) share one sort.
    static func previousSiblingLookup(in eventCache: Node, index: Index, lookups: Int) -> (Key, Node) -> Key? {
        if case .key = index { return { key, node in eventCache.predecessor(of: key, node, by: index) } }
        guard lookups > 4 else { return { key, node in eventCache.predecessor(of: key, node, by: index) } }
        let ordered = eventCache.children(by: index)
        var positions: [Key: Int] = [:]
        for (position, entry) in ordered.enumerated() { positions[entry.key] = position }
        return { key, node in
            guard let position = positions[key], ordered[position].node == node else {
                return eventCache.predecessor(of: key, node, by: index)
            }
            return position > 0 ? ordered[position - 1].key : nil
        }
    }
}
