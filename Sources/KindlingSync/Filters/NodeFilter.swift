import KindlingCore

/// How a view turns incoming data into what its query shows, reporting each child change it
/// makes along the way.
///
/// Three filters exist: every child in the index order (`IndexedFilter`), a range of it
/// (`RangedFilter`), and a window of a given size (`LimitedFilter`).
protocol NodeFilter: Sendable {
    /// The order of the view.
    var index: Index { get }

    /// True when the filter may drop children, so the result is not the complete data.
    var filtersNodes: Bool { get }

    /// The unfiltering filter with the same index, for server data that must stay complete.
    var indexedFilter: IndexedFilter { get }

    /// `snap` with child `key` replaced by `newChild`; `affectedPath` (relative to the child)
    /// says where the change happened, so unchanged data can be skipped quickly. `source` can
    /// provide the child that slides into a full window.
    func updateChild(
        _ snap: Node,
        key: Key,
        newChild: Node,
        affectedPath: Path,
        source: CompleteChildSource,
        changes: inout ChildChangeAccumulator?
    ) -> Node

    /// `newSnap` filtered, as a replacement for `oldSnap`.
    func updateFullNode(_ oldSnap: Node, _ newSnap: Node, changes: inout ChildChangeAccumulator?) -> Node

    /// `oldSnap` with a new priority (a leaf or empty node).
    func updatePriority(_ oldSnap: Node, _ priority: Node) -> Node
}
