import KindlingCore

/// Turns a view's changes into events for its registrations, in the order the SDKs raise them.
///
/// By kind first (removed, added, moved, changed, value), then by the query's order within a
/// kind, then registration by registration. A child whose change moved it in the order gets a
/// `childMoved` besides its `childChanged`. Previous-sibling names come from the new event cache
/// (through `previousSibling`), so each event says where the child now sits.
struct EventGenerator: Sendable {
    let path: Path
    let query: Query

    func events(
        for changes: [ChildChange],
        registrations: [RegistrationID],
        previousSibling: (Key, Node) -> Key?
    ) -> [Event] {
        let index = query.index
        var moves: [ChildChange] = []
        for change in changes where change.kind == .childChanged {
            if let key = change.key, let old = change.oldNode, index.indexedValueChanged(old, change.node) {
                moves.append(.moved(key, change.node))
            }
        }
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
}
