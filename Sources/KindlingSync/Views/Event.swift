import KindlingCore

/// An event for one listener: the SDK hands `node` to the callback registered as `registration`.
public struct Event: Sendable, Equatable {
    /// Whose callback to run.
    public var registration: RegistrationID
    public var kind: EventKind
    /// The location the listener is attached to (not the child's location).
    public var path: Path
    /// The listener's query; the snapshot's children are ordered by its index.
    public var query: Query
    /// The child for child events; nil for `value` and `cancelled`.
    public var childKey: Key?
    /// The child (the removed child for `childRemoved`), or the whole data for `value`.
    public var node: Node
    /// The name of the child just before this one in the query's order (`prevName`), for
    /// `childAdded`, `childChanged` and `childMoved`; nil when it is first.
    public var previousSibling: Key?

    public init(
        registration: RegistrationID,
        kind: EventKind,
        path: Path,
        query: Query,
        childKey: Key? = nil,
        node: Node = .empty,
        previousSibling: Key? = nil
    ) {
        self.registration = registration
        self.kind = kind
        self.path = path
        self.query = query
        self.childKey = childKey
        self.node = node
        self.previousSibling = previousSibling
    }
}
