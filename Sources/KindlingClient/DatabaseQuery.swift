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
    /// Set for `.info/connected`, which the client answers itself.
    let isConnectedInfo: Bool

    init(database: Database, path: Path, query: Query = .all, isConnectedInfo: Bool = false) {
        self.database = database
        self.path = path
        self.query = query
        self.isConnectedInfo = isConnectedInfo
    }

    /// This query itself (a reference gives the query at its location).
    public var asQuery: DatabaseQuery { self }

    func with(_ change: (inout Query) throws -> Void) rethrows -> DatabaseQuery {
        var query = self.query
        try change(&query)
        return DatabaseQuery(database: database, path: path, query: query)
    }

    static func bound(_ value: JSONValue, childKey: String?, default name: BoundName) throws(DatabaseError)
        -> QueryBound
    {
        do {
            let node = try Node(json: value)
            guard node.isEmpty || node.isLeaf else { throw DatabaseError.invalidArgument("A query bound must be a leaf") }
            return QueryBound(value: node, name: try childKey.map { .key(try Key($0)) } ?? name)
        } catch let error as DatabaseError {
            throw error
        } catch {
            throw .invalidArgument("Bad query bound: \(error)")
        }
    }
}

extension DatabaseQuerying {
    // MARK: Observing

    /// Calls `block` for every `eventType` event on `queue` (the database's by default), starting
    /// with the data already known. If the server refuses the listen or later revokes it (the
    /// security rules deny reading here), `cancel` is called once with the reason and the
    /// observer is gone. Returns the handle for `removeObserver(withHandle:)`.
    @discardableResult
    public func observe(
        _ eventType: DataEventType, on queue: DispatchQueue? = nil,
        with block: @escaping @Sendable (DataEvent) -> Void,
        withCancel cancel: (@Sendable (DatabaseError) -> Void)? = nil
    ) -> Int {
        let target = asQuery
        let repo = target.database.repo
        let queue = queue ?? target.database.callbackQueue
        if target.isConnectedInfo { return repo.observeConnected(queue: queue, callback: block) }
        return repo.observe(path: target.path, query: target.query, eventType: eventType, queue: queue, callback: block, cancel: cancel)
    }

    /// Calls `block` once, for the first `eventType` event.
    public func observeSingleEvent(
        of eventType: DataEventType, on queue: DispatchQueue? = nil,
        with block: @escaping @Sendable (DataEvent) -> Void
    ) {
        let box = HandleBox()
        let repo = asQuery.database.repo
        let id = observe(eventType, on: queue) { event in
            guard box.fire(remove: { repo.removeObserver($0) }) else { return }
            block(event)
        }
        box.set(id, remove: { repo.removeObserver($0) })
    }

    public func removeObserver(withHandle handle: Int) { asQuery.database.repo.removeObserver(handle) }

    /// The events as an async sequence; the observer goes away when iteration ends.
    public func events(_ eventType: DataEventType) -> AsyncStream<DataEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DataEvent.self)
        let queue = DispatchQueue(label: "kindling.events")
        let handle = observe(eventType, on: queue) { continuation.yield($0) }
        let repo = asQuery.database.repo
        continuation.onTermination = { _ in repo.removeObserver(handle) }
        return stream
    }

    /// Reads the data once from the server.
    public func getData() async throws(DatabaseError) -> DataSnapshot {
        let target = asQuery
        let node = try await target.database.repo.get(path: target.path, query: target.query)
        return DataSnapshot(path: target.path, node: node, query: target.query)
    }

    // MARK: Building queries

    public func queryOrdered(byChild child: String) throws(DatabaseError) -> DatabaseQuery {
        do {
            let childPath = try Path(child)
            return asQuery.with { $0.index = .child(childPath) }
        } catch {
            throw .invalidArgument("Bad child path \(child): \(error)")
        }
    }

    public func queryOrderedByKey() -> DatabaseQuery { asQuery.with { $0.index = .key } }
    public func queryOrderedByValue() -> DatabaseQuery { asQuery.with { $0.index = .value } }
    public func queryOrderedByPriority() -> DatabaseQuery { asQuery.with { $0.index = .priority } }

    public func queryStarting(atValue value: JSONValue, childKey: String? = nil) throws(DatabaseError) -> DatabaseQuery {
        let bound = try DatabaseQuery.bound(value, childKey: childKey, default: .min)
        return asQuery.with { $0.start = bound }
    }

    public func queryEnding(atValue value: JSONValue, childKey: String? = nil) throws(DatabaseError) -> DatabaseQuery {
        let bound = try DatabaseQuery.bound(value, childKey: childKey, default: .max)
        return asQuery.with { $0.end = bound }
    }

    public func queryEqual(toValue value: JSONValue, childKey: String? = nil) throws(DatabaseError) -> DatabaseQuery {
        let start = try DatabaseQuery.bound(value, childKey: childKey, default: .min)
        let end = try DatabaseQuery.bound(value, childKey: childKey, default: .max)
        return asQuery.with {
            $0.start = start
            $0.end = end
        }
    }

    public func queryLimited(toFirst count: Int) -> DatabaseQuery {
        asQuery.with { $0.limit = QueryLimit(count: count, fromEnd: false) }
    }

    public func queryLimited(toLast count: Int) -> DatabaseQuery {
        asQuery.with { $0.limit = QueryLimit(count: count, fromEnd: true) }
    }
}

/// Holds an observer handle for `observeSingleEvent`: the first event removes the observer,
/// even when it runs before `observe` has returned the handle.
private final class HandleBox: Sendable {
    private let state = Mutex<(id: Int?, fired: Bool)>((nil, false))

    func set(_ id: Int, remove: (Int) -> Void) {
        let fired = state.withLock { state in
            state.id = id
            return state.fired
        }
        if fired { remove(id) }
    }

    /// True for the first event only.
    func fire(remove: (Int) -> Void) -> Bool {
        let (first, id) = state.withLock { state -> (Bool, Int?) in
            defer { state.fired = true }
            return (!state.fired, state.id)
        }
        if first, let id { remove(id) }
        return first
    }
}
