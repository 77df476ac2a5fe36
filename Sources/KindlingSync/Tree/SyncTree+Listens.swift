import KindlingCore

/// Listeners, and the server listens they need.
///
/// One default listen at a location covers every listener at and below it, so a new default
/// listen replaces the listens below it, and removing the last one brings them back. Filtered
/// queries need their own tagged listens unless a default listen above covers them.
extension SyncTree {
    /// Adds a listener for `query` at `path`. Returns its initial events: a `childAdded` for each
    /// child already known and the value, if the data is fully known from the cache or from
    /// pending writes.
    public mutating func addListen(path: Path, query: Query, registration: RegistrationID) -> [Event] {
        var serverCache: Node?
        var foundAncestorDefaultView = false
        syncPoints.forEachAbove(path) { syncPointPath, syncPoint in
            serverCache = serverCache ?? syncPoint.completeServerCache(at: path.dropFirst(syncPointPath.count))
            foundAncestorDefaultView = foundAncestorDefaultView || syncPoint.hasCompleteView
        }
        if let syncPoint = syncPoints.value(at: path) {
            foundAncestorDefaultView = foundAncestorDefaultView || syncPoint.hasCompleteView
            serverCache = serverCache ?? syncPoint.completeServerCache(at: .root)
        } else {
            syncPoints.set(SyncPoint(), at: path)
        }
        let serverCacheComplete = serverCache != nil
        if serverCache == nil {
            // Not known as a whole: gather the children that listeners just below know fully.
            var children = Node.empty
            syncPoints.subtree(at: path).forEachChildValue { key, child in
                if let complete = child.completeServerCache(at: .root) { children = children.settingChild(key, complete) }
            }
            serverCache = children
        }
        let viewExisted = syncPoints.value(at: path)?.view(for: query) != nil
        if !viewExisted && !query.loadsAllData { tags.assign(path: path, query: query) }
        let writes = WriteTreeRef(pendingWrites, at: path)
        let events =
            syncPoints.modifyValue(at: path) {
                $0.add(
                    registration, path: path, query: query, writes: writes, serverCache: serverCache ?? .empty,
                    serverCacheComplete: serverCacheComplete)
            } ?? []
        if !viewExisted && !foundAncestorDefaultView { setUpListen(path: path, query: query) }
        return events
    }

    /// Removes one registration (all of them when nil) from `query` at `path`; with the default
    /// query, from every query there. Returns no events.
    public mutating func removeListen(path: Path, query: Query = .all, registration: RegistrationID?) -> [Event] {
        removeRegistrations(path: path, query: query, registration: registration, cancel: false)
    }

    /// The server refused or revoked the listen for `query` at `path`: every registration on it
    /// is removed and gets a `cancelled` event. For the default listen, those are the views of
    /// all the data; filtered queries there get listens of their own instead.
    public mutating func cancelListen(path: Path, query: Query) -> [Event] {
        removeRegistrations(path: path, query: query, registration: nil, cancel: true)
    }

    private mutating func removeRegistrations(
        path: Path,
        query: Query,
        registration: RegistrationID?,
        cancel: Bool
    ) -> [Event] {
        guard let syncPoint = syncPoints.value(at: path),
            query.identifier == Query.all.identifier || syncPoint.view(for: query) != nil
        else { return [] }
        let removal =
            syncPoints.modifyValue(at: path) {
                $0.remove(registration, path: path, query: query, cancel: cancel)
            } ?? SyncPoint.Removal()
        if syncPoints.value(at: path)?.isEmpty == true { syncPoints.removeValue(at: path) }
        let removed = removal.removedQueries
        let removingDefault = removed.contains { $0.query.loadsAllData }
        let covered = syncPoints.firstOnPath(path) { _, syncPoint in syncPoint.hasCompleteView ? true : nil } ?? false
        if removingDefault && !covered {
            // The default listen covered the listeners below; they need their own listens again.
            for view in SyncTree.distinctViews(in: syncPoints.subtree(at: path)) {
                pendingListenChanges.append(.start(serverListen(path: view.path, query: view.query)))
            }
        }
        if !covered && !removed.isEmpty && !cancel {
            if removingDefault {
                pendingListenChanges.append(.stop(ServerListen(path: path, query: .all, tag: nil)))
            } else {
                for (removedPath, removedQuery) in removed {
                    pendingListenChanges.append(.stop(serverListen(path: removedPath, query: removedQuery)))
                }
            }
        }
        for (removedPath, removedQuery) in removed { tags.remove(path: removedPath, query: removedQuery) }
        return removal.events
    }

    /// The listen that serves `query` at `path`: queries that load all data share the default.
    func serverListen(path: Path, query: Query) -> ServerListen {
        let listened = query.loadsAllData ? Query.all : query
        return ServerListen(path: path, query: listened, tag: tags.tag(path: path, query: query))
    }

    /// Starts the listen for a new view; a default listen replaces the listens below it.
    private mutating func setUpListen(path: Path, query: Query) {
        let listen = serverListen(path: path, query: query)
        pendingListenChanges.append(.start(listen))
        guard listen.tag == nil else { return }
        let covered = syncPoints.subtree(at: path).fold { relativePath, syncPoint, children -> [View] in
            if !relativePath.isRoot, let complete = syncPoint?.completeView { return [complete] }
            return (syncPoint?.queryViews ?? []) + children.flatMap(\.result)
        }
        for view in covered {
            pendingListenChanges.append(.stop(serverListen(path: view.path, query: view.query)))
        }
    }

    /// The views that each need a listen in `subtree`: the view of all the data where there is
    /// one (it covers everything below), else every filtered query.
    static func distinctViews(in subtree: OrderedPathTree<SyncPoint>) -> [View] {
        subtree.fold { _, syncPoint, children -> [View] in
            if let complete = syncPoint?.completeView { return [complete] }
            return (syncPoint?.queryViews ?? []) + children.flatMap(\.result)
        }
    }
}
