import KindlingCore

/// A change travelling through the tree of sync points to the views it concerns.
///
/// Each sync point receives the operation relative to its own location (`forChild` peels off one
/// key at a time, or narrows an operation at the root to one child).
struct SyncOperation: Sendable {
    /// Who the change comes from.
    enum Source: Sendable, Equatable {
        /// A local `set`, `update` or acknowledgement.
        case user
        /// Server data for every listener at the location.
        case server
        /// Server data for one query's view only (the server tagged it).
        case taggedServer(queryID: String)

        var fromUser: Bool { self == .user }
        var isTagged: Bool { if case .taggedServer = self { return true } else { return false } }
        var queryID: String? { if case .taggedServer(let id) = self { return id } else { return nil } }
    }

    enum Kind: Sendable {
        case overwrite(Node)
        /// Relative paths to new data.
        case merge(OrderedPathTree<Node>)
        /// A pending write left the write tree; `affected` marks the paths it touched.
        case ackUserWrite(affected: OrderedPathTree<Bool>, revert: Bool)
        /// The server finished sending a listen's initial data.
        case listenComplete
    }

    var source: Source
    var path: Path
    var kind: Kind

    /// The operation as seen by the child `key`, or nil when it does not concern that child.
    func forChild(_ key: Key) -> SyncOperation? {
        if let front = path.first {
            guard front == key else { return nil }
            return SyncOperation(source: source, path: path.dropFirst(), kind: kind)
        }
        switch kind {
        case .overwrite(let node):
            return SyncOperation(source: source, path: .root, kind: .overwrite(node.child(key)))
        case .merge(let children):
            guard let childTree = children.child(key), !childTree.isEmpty else { return nil }
            if let node = childTree.value {
                // The merge names this child outright: an overwrite for it.
                return SyncOperation(source: source, path: .root, kind: .overwrite(node))
            }
            return SyncOperation(source: source, path: .root, kind: .merge(childTree))
        case .ackUserWrite(let affected, let revert):
            if affected.value != nil { return self }
            return SyncOperation(
                source: source, path: .root,
                kind: .ackUserWrite(affected: affected.child(key) ?? OrderedPathTree(), revert: revert))
        case .listenComplete:
            return self
        }
    }
}
