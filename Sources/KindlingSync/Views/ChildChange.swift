import KindlingCore

/// One change to a view's data, before it becomes an event for each registration.
struct ChildChange: Sendable {
    var kind: EventKind
    /// The child's name; nil for `value`.
    var key: Key?
    /// The new child (the old one for `childRemoved`), or the whole data for `value`.
    var node: Node
    /// The child before a `childChanged`, to tell whether it also moved.
    var oldNode: Node?

    static func value(_ node: Node) -> ChildChange { ChildChange(kind: .value, key: nil, node: node) }
    static func added(_ key: Key, _ node: Node) -> ChildChange { ChildChange(kind: .childAdded, key: key, node: node) }
    static func removed(_ key: Key, _ old: Node) -> ChildChange { ChildChange(kind: .childRemoved, key: key, node: old) }
    static func moved(_ key: Key, _ node: Node) -> ChildChange { ChildChange(kind: .childMoved, key: key, node: node) }
    static func changed(_ key: Key, _ node: Node, old: Node) -> ChildChange {
        ChildChange(kind: .childChanged, key: key, node: node, oldNode: old)
    }
}
