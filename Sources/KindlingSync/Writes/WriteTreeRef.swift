import KindlingCore

/// The pending writes as seen from one location: what a sync point and its views need, with
/// every path relative to that location.
///
/// It holds a copy of the write tree, which costs nothing (the tree's storage is shared and never
/// changed while an operation runs through the views).
struct WriteTreeRef: Sendable {
    let writes: WriteTree
    let path: Path

    init(_ writes: WriteTree, at path: Path) {
        self.writes = writes
        self.path = path
    }

    /// The same writes seen from the child `key`.
    func child(_ key: Key) -> WriteTreeRef { WriteTreeRef(writes, at: path.child(key)) }

    /// See `WriteTree.completeEventCache`.
    func completeEventCache(serverCache: Node?) -> Node? {
        writes.completeEventCache(at: path, serverCache: serverCache)
    }

    /// See `WriteTree.completeEventChildren`.
    func completeEventChildren(serverChildren: Node?) -> Node {
        writes.completeEventChildren(at: path, serverChildren: serverChildren)
    }

    /// See `WriteTree.eventCacheAfterServerOverwrite`.
    func eventCacheAfterServerOverwrite(childPath: Path, existingServerSnap: Node) -> Node? {
        writes.eventCacheAfterServerOverwrite(at: path, childPath: childPath, existingServerSnap: existingServerSnap)
    }

    /// See `WriteTree.completeChild`.
    func completeChild(_ key: Key, serverCache: CacheNode) -> Node? {
        writes.completeChild(at: path, key: key, serverCache: serverCache)
    }

    /// The write covering `relativePath` below this location completely, if any.
    func shadowingWrite(at relativePath: Path) -> Node? {
        writes.shadowingWrite(at: path.appending(relativePath))
    }

    /// See `WriteTree.child(after:at:serverData:index:reversed:)`.
    func child(after post: NamedNode, serverData: Node?, index: Index, reversed: Bool) -> NamedNode? {
        writes.child(after: post, at: path, serverData: serverData, index: index, reversed: reversed)
    }
}
