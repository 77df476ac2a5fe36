import KindlingCore

/// Applies operations to a view's caches and collects the child changes they cause.
///
/// The rules are the JavaScript SDK's, kept step for step: which cache an operation updates,
/// when the server cache gets filtered, how pending writes shadow server data, and what counts as
/// a change. Listeners on other SDKs and the conformance scenarios expect exactly these events.
struct ViewProcessor: Sendable {
    let filter: any NodeFilter

    /// The new caches and the changes (the value change last, when there is one).
    struct Result {
        var viewCache: ViewCache
        var changes: [ChildChange]
    }

    func apply(
        _ operation: SyncOperation,
        to oldCache: ViewCache,
        writes: WriteTreeRef,
        completeCache: Node?
    ) -> Result {
        var accumulator: ChildChangeAccumulator? = ChildChangeAccumulator()
        let newCache: ViewCache
        switch operation.kind {
        case .overwrite(let node):
            if operation.source.fromUser {
                newCache = applyUserOverwrite(
                    oldCache, at: operation.path, node, writes: writes, completeCache: completeCache,
                    changes: &accumulator)
            } else {
                // Tagged data is filtered; so is data for an already filtered cache, unless it
                // replaces the whole location (then the cache becomes unfiltered again).
                let filterServerNode =
                    operation.source.isTagged || (oldCache.serverCache.isFiltered && !operation.path.isRoot)
                newCache = applyServerOverwrite(
                    oldCache, at: operation.path, node, writes: writes, completeCache: completeCache,
                    filterServerNode: filterServerNode, changes: &accumulator)
            }
        case .merge(let children):
            if operation.source.fromUser {
                newCache = applyUserMerge(
                    oldCache, at: operation.path, children, writes: writes, completeCache: completeCache,
                    changes: &accumulator)
            } else {
                let filterServerNode = operation.source.isTagged || oldCache.serverCache.isFiltered
                newCache = applyServerMerge(
                    oldCache, at: operation.path, children, writes: writes, completeCache: completeCache,
                    filterServerNode: filterServerNode, changes: &accumulator)
            }
        case .ackUserWrite(let affected, let revert):
            if revert {
                newCache = revertUserWrite(
                    oldCache, at: operation.path, writes: writes, completeCache: completeCache, changes: &accumulator)
            } else {
                newCache = ackUserWrite(
                    oldCache, at: operation.path, affected: affected, writes: writes, completeCache: completeCache,
                    changes: &accumulator)
            }
        case .listenComplete:
            newCache = listenComplete(oldCache, at: operation.path, writes: writes, changes: &accumulator)
        }
        var changes = accumulator?.result ?? []
        if let value = ViewProcessor.valueChange(from: oldCache, to: newCache, childChanges: changes) {
            changes.append(value)
        }
        return Result(viewCache: newCache, changes: changes)
    }

    /// The value change, when one is due: the event data must be complete, and something must
    /// have changed that child events alone would not show (or nothing was complete before).
    static func valueChange(from old: ViewCache, to new: ViewCache, childChanges: [ChildChange]) -> ChildChange? {
        let eventSnap = new.eventCache
        guard eventSnap.isFullyInitialized else { return nil }
        let node = eventSnap.node
        guard old.eventCache.isFullyInitialized else { return .value(node) }
        let oldNode = old.eventCache.node
        if !childChanges.isEmpty || ((node.isLeaf || node.isEmpty) && node != oldNode) || node.priority != oldNode.priority {
            return .value(node)
        }
        return nil
    }

    /// Discards changes: for server caches, whose updates raise no events of their own.
    static func discarding(_ body: (inout ChildChangeAccumulator?) -> Node) -> Node {
        var none: ChildChangeAccumulator? = nil
        return body(&none)
    }
}
