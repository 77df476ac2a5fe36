import KindlingCore

/// Collects the child changes of one operation, one net change per child.
///
/// A single operation can touch a child twice (a limited window drops a child, then the same
/// child slides back in), and the user must see the net effect only: removed then added becomes
/// changed, added then removed cancels out, and so on.
struct ChildChangeAccumulator: Sendable {
    private var order: [Key] = []
    private var changes: [Key: ChildChange] = [:]

    /// Records a `childAdded`, `childRemoved` or `childChanged`, merged with any earlier change
    /// to the same child.
    mutating func track(_ change: ChildChange) {
        guard let key = change.key else { return }
        guard let old = changes[key] else {
            order.append(key)
            changes[key] = change
            return
        }
        switch (old.kind, change.kind) {
        case (.childRemoved, .childAdded):
            changes[key] = .changed(key, change.node, old: old.node)
        case (.childAdded, .childRemoved):
            changes[key] = nil
            order.removeAll { $0 == key }
        case (.childChanged, .childRemoved):
            changes[key] = .removed(key, old.oldNode ?? old.node)
        case (.childAdded, .childChanged):
            changes[key] = .added(key, change.node)
        case (.childChanged, .childChanged):
            changes[key] = .changed(key, change.node, old: old.oldNode ?? old.node)
        default:
            // The filters never produce any other sequence; should one appear, the newest
            // change is the best account of the child.
            changes[key] = change
        }
    }

    /// The net changes, in the order their children were first touched.
    var result: [ChildChange] { order.compactMap { changes[$0] } }
}
