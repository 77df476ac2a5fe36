import KindlingCore

/// One pending user write, kept until the server acknowledges or rejects it.
struct WriteRecord: Sendable {
    /// What a write changes: a whole location (`set`, transactions) or some of its descendants
    /// (`update`).
    enum Change: Sendable {
        case overwrite(Node)
        case merge([(path: Path, node: Node)])
    }

    var writeID: Int
    var path: Path
    var change: Change
    /// False for a transaction that must not show locally: recorded so that later transaction
    /// runs see it, but left out of every event cache.
    var visible: Bool

    /// True when this write replaces `other` entirely (so removing the write below it changes
    /// nothing anyone can see).
    func covers(_ other: Path) -> Bool {
        switch change {
        case .overwrite: return path.contains(other)
        case .merge(let children): return children.contains { path.appending($0.path).contains(other) }
        }
    }
}
