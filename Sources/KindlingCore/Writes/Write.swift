/// A write after validation and server-value resolution: what the tree applies, what the log
/// records, and what listeners are told. Replaying the same writes in order always gives the
/// same tree.
public enum Write: Sendable, Equatable {
    /// Replace the node at the path (an empty node removes it).
    case set(Path, Node)
    /// Replace several non-overlapping locations below the path, all at once.
    case merge(Path, [MergeEntry])

    /// The location the write is anchored at.
    public var path: Path {
        switch self {
        case .set(let path, _), .merge(let path, _): return path
        }
    }
}

/// One location of a merge: a path relative to the merge's path and the node to store there.
public struct MergeEntry: Sendable, Equatable {
    public var path: Path
    public var node: Node

    public init(path: Path, node: Node) {
        self.path = path
        self.node = node
    }
}
