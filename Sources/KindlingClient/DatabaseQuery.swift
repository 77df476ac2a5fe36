import Foundation
import KindlingCore
import Synchronization

/// A location with an order, a range and a limit: what observers and reads look at.
///
/// Values are immutable: every `query…` call returns a new query, as in the Firebase SDKs.
public struct DatabaseQuery: DatabaseQuerying {
    public let database: Database
    public let path: Path
    public let query: Query
    /// Set for the client's own `.info` data, which it answers itself.
    let info: InfoPath?
    /// Set for a reference's own query: `removeAllObservers` then reaches every query at the path.
    let isReference: Bool

    init(database: Database, path: Path, query: Query = .all, info: InfoPath? = nil, isReference: Bool = false) {
        self.database = database
        self.path = path
        self.query = query
        self.info = info
        self.isReference = isReference
    }

    /// The location this query reads, as a reference.
    public var ref: DatabaseReference { DatabaseReference(database: database, path: path, info: info) }

    /// This query itself (a reference gives the query at its location).
    public var asQuery: DatabaseQuery { self }

    func with(_ change: (inout Query) throws -> Void) rethrows -> DatabaseQuery {
        var query = self.query
        try change(&query)
        return DatabaseQuery(database: database, path: path, query: query)
    }

    /// A range bound from a value and an optional key. A value that cannot bound a range (an
    /// object, an array, a type JSON lacks) or a key that is not valid is a programming error
    /// and stops the program, as Firebase raises for it.
    static func bound(_ value: Any?, childKey: String?, default name: BoundName, in call: String) -> QueryBound {
        do {
            let node = try Node(json: try JSONValue(foundationObject: value))
            guard node.isEmpty || node.isLeaf else { throw DatabaseError.invalidArgument("a query bound must be a leaf, not \(value ?? "nil")") }
            return QueryBound(value: node, name: try childKey.map { .key(try Key($0)) } ?? name)
        } catch {
            preconditionFailure("\(call): \(error)")
        }
    }
}

extension DatabaseQuery {
    /// An exclusive bound, as the JS SDK sends after/before: without a key, on an index other
    /// than the key, the name that sorts past every key with that value (`[MAX_NAME]` to start
    /// after it, `[MIN_NAME]` to end before it).
    func exclusiveBound(_ value: Any?, childKey: String?, atStart: Bool, in call: String) -> QueryBound {
        let byKey = query.index == .key
        let name: BoundName = atStart == byKey ? .min : .max
        var bound = DatabaseQuery.bound(value, childKey: childKey, default: name, in: call)
        bound.inclusive = false
        return bound
    }
}

extension DatabaseQuerying {
    // MARK: Observing

    /// Calls `block` with the snapshot of every `eventType` event on `queue` (the database's
    /// `callbackQueue` by default), starting with the data already known, as the Firebase SDKs
    /// do. If the server refuses the listen or later revokes it (the security rules deny reading
    /// here), `cancel` is called once with the reason and the observer is gone. Returns the
    /// handle for `removeObserver(withHandle:)`.
    @discardableResult
    public func observe(
        _ eventType: DataEventType, on queue: DispatchQueue? = nil, with block: @escaping (DataSnapshot) -> Void,
        withCancel cancel: ((DatabaseError) -> Void)? = nil
    ) -> DatabaseHandle {
        let callback = Callback(block: block)
        return observeEvents(eventType, on: queue, with: { callback.block($0.snapshot) }, withCancel: cancel)
    }

    /// The same, with the key of the child before this one in the query's order (for
    /// `childAdded`, `childChanged` and `childMoved`; nil for the first child and other events).
    @discardableResult
    public func observe(
        _ eventType: DataEventType, on queue: DispatchQueue? = nil,
        andPreviousSiblingKeyWith block: @escaping (DataSnapshot, String?) -> Void,
        withCancel cancel: ((DatabaseError) -> Void)? = nil
    ) -> DatabaseHandle {
        let callback = Callback(block: block)
        return observeEvents(eventType, on: queue, with: { callback.block($0.snapshot, $0.previousSiblingKey) }, withCancel: cancel)
    }

    /// The same, with the whole event (its type, snapshot and previous sibling's key): one
    /// callback can serve several event types.
    @discardableResult
    public func observeEvents(
        _ eventType: DataEventType, on queue: DispatchQueue? = nil, with block: @escaping (DataEvent) -> Void,
        withCancel cancel: ((DatabaseError) -> Void)? = nil
    ) -> DatabaseHandle {
        let target = asQuery
        let database = target.database
        let repo = database.repo
        let queue = queue ?? database.callbackQueue
        let boxed = Callback(block: block)
        let callback: @Sendable (DataEvent) -> Void = { boxed.block($0.attached(to: database)) }
        let cancelled = cancel.map { cancel in
            let boxed = Callback(block: cancel)
            return { @Sendable (error: DatabaseError) in boxed.block(error) }
        }
        if let info = target.info { return DatabaseHandle(repo.observeInfo(info, queue: queue, callback: callback)) }
        return DatabaseHandle(
            repo.observe(path: target.path, query: target.query, eventType: eventType, queue: queue, callback: callback, cancel: cancelled))
    }

    /// Calls `block` once, for the first `eventType` event (or `cancel`, if the listen is refused).
    public func observeSingleEvent(
        of eventType: DataEventType, on queue: DispatchQueue? = nil, with block: @escaping (DataSnapshot) -> Void,
        withCancel cancel: ((DatabaseError) -> Void)? = nil
    ) {
        let callback = Callback(block: block)
        observeSingleEvent(of: eventType, on: queue, andPreviousSiblingKeyWith: { snapshot, _ in callback.block(snapshot) }, withCancel: cancel)
    }

    /// The same, with the previous sibling's key.
    public func observeSingleEvent(
        of eventType: DataEventType, on queue: DispatchQueue? = nil,
        andPreviousSiblingKeyWith block: @escaping (DataSnapshot, String?) -> Void,
        withCancel cancel: ((DatabaseError) -> Void)? = nil
    ) {
        let box = HandleBox()
        let repo = asQuery.database.repo
        let callback = Callback(block: block)
        let id = observeEvents(
            eventType, on: queue,
            with: { event in
                guard box.fire(remove: { repo.removeObserver(Int($0)) }) else { return }
                callback.block(event.snapshot, event.previousSiblingKey)
            }, withCancel: cancel)
        box.set(id, remove: { repo.removeObserver(Int($0)) })
    }

    /// The first `eventType` event's snapshot, as Firebase's `async` `observeSingleEvent(of:)`;
    /// throws when the listen is refused.
    public func observeSingleEvent(of eventType: DataEventType) async throws(DatabaseError) -> DataSnapshot {
        try await observeSingleEventAndPreviousSiblingKey(of: eventType).0
    }

    /// The same, with the previous sibling's key.
    public func observeSingleEventAndPreviousSiblingKey(of eventType: DataEventType) async throws(DatabaseError) -> (DataSnapshot, String?) {
        let queue = DispatchQueue(label: "kindling.single-event")
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<(DataSnapshot, String?), DatabaseError>, Never>) in
            observeSingleEvent(
                of: eventType, on: queue, andPreviousSiblingKeyWith: { continuation.resume(returning: .success(($0, $1))) },
                withCancel: { continuation.resume(returning: .failure($0)) })
        }
        return try result.get()
    }

    /// Removes the observer `handle` names; its listen ends when it was the last one.
    public func removeObserver(withHandle handle: DatabaseHandle) {
        guard let id = Int(exactly: handle) else { return }
        asQuery.database.repo.removeObserver(id)
    }

    /// Reads the data once (see `getData()`), with Firebase's completion block, called on the
    /// database's callback queue; the error is a `DatabaseError`.
    public func getData(completion: @escaping ((any Error)?, DataSnapshot?) -> Void) {
        let queue = asQuery.database.callbackQueue
        let callback = Callback(block: completion)
        Task {
            do throws(DatabaseError) {
                let snapshot = try await getData()
                queue.async { callback.block(nil, snapshot) }
            } catch {
                queue.async { callback.block(error, nil) }
            }
        }
    }

    /// The events as an async sequence; the observer goes away when iteration ends.
    public func events(_ eventType: DataEventType) -> AsyncStream<DataEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DataEvent.self)
        let queue = DispatchQueue(label: "kindling.events")
        let handle = Int(observeEvents(eventType, on: queue) { continuation.yield($0) })
        let repo = asQuery.database.repo
        continuation.onTermination = { _ in repo.removeObserver(handle) }
        return stream
    }

    /// Removes every observer this location or query has: at a reference, those of every query
    /// at its path (not those at its children), as in the Firebase SDKs; at a query, its own.
    public func removeAllObservers() {
        let target = asQuery
        target.database.repo.removeObservers(
            path: target.path, query: target.isReference ? nil : target.query, info: target.info)
    }

    /// Keeps the location's data synced (its listen open, its cache fresh) while `keepSynced`
    /// is true, with no observer of the app's own, as Firebase does for data a screen will need.
    public func keepSynced(_ keepSynced: Bool) {
        let target = asQuery
        guard target.info == nil else { return }
        target.database.keepSynced(keepSynced, path: target.path, query: target.query)
    }

    /// Reads the data once: at once from an active listener's data when it holds all of it,
    /// else from the server; with no connection for 3 s, throws `.offline`; a cancelled task
    /// throws `.cancelled` at once.
    public func getData() async throws(DatabaseError) -> DataSnapshot {
        let target = asQuery
        if let info = target.info {
            let value = target.database.repo.infoValue(info)
            return DataSnapshot(path: info.path, node: (try? Node(json: value)) ?? .empty, database: target.database)
        }
        let node = try await target.database.repo.get(path: target.path, query: target.query)
        return DataSnapshot(path: target.path, node: node, query: target.query, database: target.database)
    }

    // MARK: Building queries

    /// Orders by the value at a child path; a path that is not valid stops the program, as in
    /// the Firebase SDKs.
    public func queryOrdered(byChild child: String) -> DatabaseQuery {
        do {
            let childPath = try Path(child)
            return asQuery.with { $0.index = .child(childPath) }
        } catch {
            preconditionFailure("queryOrdered(byChild:): bad child path \(child): \(error)")
        }
    }

    public func queryOrderedByKey() -> DatabaseQuery { asQuery.with { $0.index = .key } }
    public func queryOrderedByValue() -> DatabaseQuery { asQuery.with { $0.index = .value } }
    public func queryOrderedByPriority() -> DatabaseQuery { asQuery.with { $0.index = .priority } }

    /// Children from `value` on (and, among equal values, from the key `childKey` on).
    public func queryStarting(atValue value: Any?, childKey: String? = nil) -> DatabaseQuery {
        let bound = DatabaseQuery.bound(value, childKey: childKey, default: .min, in: "queryStarting(atValue:)")
        return asQuery.with { $0.start = bound }
    }

    /// The same for a typed value (`.number(3)`).
    public func queryStarting(atValue value: JSONValue, childKey: String? = nil) -> DatabaseQuery {
        queryStarting(atValue: value as Any?, childKey: childKey)
    }

    /// Children after `value` (and, among equal values, after the key `childKey`), as the JS
    /// SDK sends it: an exclusive bound.
    public func queryStarting(afterValue value: Any?, childKey: String? = nil) -> DatabaseQuery {
        let bound = asQuery.exclusiveBound(value, childKey: childKey, atStart: true, in: "queryStarting(afterValue:)")
        return asQuery.with { $0.start = bound }
    }

    /// Children up to `value` (and, among equal values, up to the key `childKey`).
    public func queryEnding(atValue value: Any?, childKey: String? = nil) -> DatabaseQuery {
        let bound = DatabaseQuery.bound(value, childKey: childKey, default: .max, in: "queryEnding(atValue:)")
        return asQuery.with { $0.end = bound }
    }

    /// The same for a typed value.
    public func queryEnding(atValue value: JSONValue, childKey: String? = nil) -> DatabaseQuery {
        queryEnding(atValue: value as Any?, childKey: childKey)
    }

    /// Children before `value` (and, among equal values, before the key `childKey`).
    public func queryEnding(beforeValue value: Any?, childKey: String? = nil) -> DatabaseQuery {
        let bound = asQuery.exclusiveBound(value, childKey: childKey, atStart: false, in: "queryEnding(beforeValue:)")
        return asQuery.with { $0.end = bound }
    }

    /// Children whose value is `value` (and key `childKey`, when given).
    public func queryEqual(toValue value: Any?, childKey: String? = nil) -> DatabaseQuery {
        let start = DatabaseQuery.bound(value, childKey: childKey, default: .min, in: "queryEqual(toValue:)")
        let end = DatabaseQuery.bound(value, childKey: childKey, default: .max, in: "queryEqual(toValue:)")
        return asQuery.with {
            $0.start = start
            $0.end = end
        }
    }

    /// The same for a typed value.
    public func queryEqual(toValue value: JSONValue, childKey: String? = nil) -> DatabaseQuery {
        queryEqual(toValue: value as Any?, childKey: childKey)
    }

    /// The first `count` children in the order.
    public func queryLimited(toFirst count: UInt) -> DatabaseQuery {
        asQuery.with { $0.limit = QueryLimit(count: Int(clamping: count), fromEnd: false) }
    }

    /// The last `count` children in the order.
    public func queryLimited(toLast count: UInt) -> DatabaseQuery {
        asQuery.with { $0.limit = QueryLimit(count: Int(clamping: count), fromEnd: true) }
    }
}

/// Holds an observer handle for `observeSingleEvent`: the first event removes the observer,
/// even when it runs before `observe` has returned the handle.
private final class HandleBox: Sendable {
    private let state = Mutex<(id: DatabaseHandle?, fired: Bool)>((nil, false))

    func set(_ id: DatabaseHandle, remove: (DatabaseHandle) -> Void) {
        let fired = state.withLock { state in
            state.id = id
            return state.fired
        }
        if fired { remove(id) }
    }

    /// True for the first event only.
    func fire(remove: (DatabaseHandle) -> Void) -> Bool {
        let (first, id) = state.withLock { state -> (Bool, DatabaseHandle?) in
            defer { state.fired = true }
            return (!state.fired, state.id)
        }
        if first, let id { remove(id) }
        return first
    }
}
