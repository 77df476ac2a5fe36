import KindlingCore

/// The client's event machinery: listeners, cached server data, pending local writes, and the
/// events that changes to any of them raise.
///
/// It is pure logic, driven by the SDK. Listeners are added and removed (`addListen`,
/// `removeListen`); local writes are applied as the user makes them (`applyUserOverwrite`,
/// `applyUserMerge`) and dropped when the server answers (`ackUserWrite`); server data is applied
/// as it arrives (`applyServerOverwrite`, `applyServerMerge`, tagged or not). Every call returns
/// the events to raise, in the order the Firebase SDKs raise them, and the listens to start or
/// stop on the server collect in `pendingListenChanges`.
///
/// Deeper locations raise their events before shallower ones, views at one location in the
/// order they were created, registrations in the order they were added.
public struct SyncTree: Sendable {
    /// A sync point wherever some query is listened to.
    var syncPoints = OrderedPathTree<SyncPoint>()
    /// The user's writes the server has not acknowledged.
    var pendingWrites = WriteTree()
    var tags = QueryTags()
    /// Listens to start or stop on the server, oldest first.
    public internal(set) var pendingListenChanges: [ListenChange] = []

    public init() {}

    /// Returns the listen changes collected so far and forgets them.
    public mutating func takeListenChanges() -> [ListenChange] {
        defer { pendingListenChanges = [] }
        return pendingListenChanges
    }

    /// The tag of a filtered query listened to at `path`, if any.
    public func tag(path: Path, query: Query) -> Int? { tags.tag(path: path, query: query) }

    // MARK: Local writes

    /// A local `set` (or a transaction's write) with the SDK's increasing write id. A write that
    /// is not `visible` (a transaction that must not show locally) is only recorded.
    public mutating func applyUserOverwrite(path: Path, node: Node, writeID: Int, visible: Bool = true) -> [Event] {
        pendingWrites.addOverwrite(node, at: path, writeID: writeID, visible: visible)
        guard visible else { return [] }
        return applyToSyncPoints(SyncOperation(source: .user, path: path, kind: .overwrite(node)))
    }

    /// A local `update`: each `(relative path, node)` below `path` is written.
    public mutating func applyUserMerge(path: Path, changes: [(path: Path, node: Node)], writeID: Int) -> [Event] {
        pendingWrites.addMerge(changes, at: path, writeID: writeID)
        return applyToSyncPoints(SyncOperation(source: .user, path: path, kind: .merge(SyncTree.mergeTree(changes))))
    }

    /// The server acknowledged a write (or refused it: `revert`). The write stops hiding the
    /// server's data; views show the server's data again where it is known.
    public mutating func ackUserWrite(writeID: Int, revert: Bool = false) -> [Event] {
        guard let write = pendingWrites.write(writeID), pendingWrites.removeWrite(writeID) else { return [] }
        var affected = OrderedPathTree<Bool>()
        switch write.change {
        case .overwrite: affected.set(true, at: .root)
        case .merge(let children): for child in children { affected.set(true, at: child.path) }
        }
        return applyToSyncPoints(
            SyncOperation(source: .user, path: write.path, kind: .ackUserWrite(affected: affected, revert: revert)))
    }

    // MARK: Server data

    /// New server data at `path`; `tag` when the server sent it for one filtered query.
    public mutating func applyServerOverwrite(path: Path, node: Node, tag: Int? = nil) -> [Event] {
        guard let tag else { return applyToSyncPoints(SyncOperation(source: .server, path: path, kind: .overwrite(node))) }
        return applyTagged(tag, at: path, kind: .overwrite(node))
    }

    /// New server data for some descendants of `path`, given by relative path.
    public mutating func applyServerMerge(path: Path, changes: [(path: Path, node: Node)], tag: Int? = nil) -> [Event] {
        let kind = SyncOperation.Kind.merge(SyncTree.mergeTree(changes))
        guard let tag else { return applyToSyncPoints(SyncOperation(source: .server, path: path, kind: kind)) }
        return applyTagged(tag, at: path, kind: kind)
    }

    /// The server finished sending a listen's data: an empty location is now known to be empty.
    public mutating func applyListenComplete(path: Path, tag: Int? = nil) -> [Event] {
        guard let tag else { return applyToSyncPoints(SyncOperation(source: .server, path: path, kind: .listenComplete)) }
        return applyTagged(tag, at: path, kind: .listenComplete)
    }

    /// Data for one tagged query: it goes to that query's view alone, relative to its location.
    /// Data for a tag no longer in use (the listener has gone) is dropped.
    private mutating func applyTagged(_ tag: Int, at path: Path, kind: SyncOperation.Kind) -> [Event] {
        guard let key = tags.query(for: tag), let relative = key.path.relative(path) else { return [] }
        let operation = SyncOperation(source: .taggedServer(queryID: key.queryID), path: relative, kind: kind)
        let writes = WriteTreeRef(pendingWrites, at: key.path)
        return syncPoints.modifyValue(at: key.path) {
            $0.apply(operation, writes: writes, completeServerCache: nil)
        } ?? []
    }

    // MARK: Reading

    /// The data at `path` as the user sees it, pending writes included (hidden ones too, and
    /// leaving out `excluding`), over the server data known from listens; empty when nothing is
    /// known. Server values (increments) and transactions start from this.
    public func completeEventCache(at path: Path, excluding: Set<Int> = []) -> Node {
        let serverCache = syncPoints.firstOnPath(path) { syncPointPath, syncPoint in
            syncPoint.completeServerCache(at: path.dropFirst(syncPointPath.count))
        }
        return pendingWrites.completeEventCache(
            at: path, serverCache: serverCache, excluding: excluding, includeHidden: true) ?? .empty
    }

    /// The server's data for `query` at `path` when a listener's cache holds all of it, nil
    /// otherwise: a one-time read is answered from it at once, as the Firebase SDKs answer
    /// `getData` while a listener is active (and while offline, where the server cannot).
    public func serverValue(at path: Path, query: Query) -> Node? {
        let whole = syncPoints.firstOnPath(path) { syncPointPath, syncPoint in
            syncPoint.completeServerCache(at: path.dropFirst(syncPointPath.count))
        }
        if let whole { return query.loadsAllData ? whole : query.result(of: whole) }
        return syncPoints.value(at: path)?.view(for: query)?.cache.completeServerSnap
    }

    /// The hash of the server data cached for a listen, sent with it so the server can skip
    /// resending data the client already has (`""` when nothing is cached).
    public func serverCacheHash(for listen: ServerListen) -> String {
        guard let syncPoint = syncPoints.value(at: listen.path),
            let view = syncPoint.view(for: listen.query)
        else { return "" }
        return view.serverNode.hash
    }

    // MARK: Applying operations

    /// A merge's changes as a tree, later entries winning.
    static func mergeTree(_ changes: [(path: Path, node: Node)]) -> OrderedPathTree<Node> {
        var tree = OrderedPathTree<Node>()
        for change in changes { tree.set(change.node, at: change.path) }
        return tree
    }

    /// Passes an operation to every sync point on its path and below it.
    private mutating func applyToSyncPoints(_ operation: SyncOperation) -> [Event] {
        SyncTree.apply(operation, to: &syncPoints, serverCache: nil, writes: WriteTreeRef(pendingWrites, at: .root))
    }

    /// Walks down the operation's path: the child's sync points first, then this one, each with
    /// the complete server data found on the way down (if any).
    private static func apply(
        _ operation: SyncOperation,
        to tree: inout OrderedPathTree<SyncPoint>,
        serverCache: Node?,
        writes: WriteTreeRef
    ) -> [Event] {
        guard let childKey = operation.path.first else {
            return applyToDescendants(operation, to: &tree, serverCache: serverCache, writes: writes)
        }
        let serverCache = serverCache ?? tree.value?.completeServerCache(at: .root)
        var events: [Event] = []
        if let childOperation = operation.forChild(childKey) {
            events +=
                tree.modifyChild(childKey) { child in
                    apply(childOperation, to: &child, serverCache: serverCache?.child(childKey), writes: writes.child(childKey))
                } ?? []
        }
        events += tree.value?.apply(operation, writes: writes, completeServerCache: serverCache) ?? []
        return events
    }

    /// Below the operation's path: every subtree (siblings in order) before this sync point.
    private static func applyToDescendants(
        _ operation: SyncOperation,
        to tree: inout OrderedPathTree<SyncPoint>,
        serverCache: Node?,
        writes: WriteTreeRef
    ) -> [Event] {
        let serverCache = serverCache ?? tree.value?.completeServerCache(at: .root)
        var events: [Event] = []
        for key in tree.children.map(\.key) {
            guard let childOperation = operation.forChild(key) else { continue }
            events +=
                tree.modifyChild(key) { child in
                    applyToDescendants(
                        childOperation, to: &child, serverCache: serverCache?.child(key), writes: writes.child(key))
                } ?? []
        }
        events += tree.value?.apply(operation, writes: writes, completeServerCache: serverCache) ?? []
        return events
    }
}
