import Dispatch
import KindlingCore
import KindlingProtocol

/// A location in the database: reads and observers (`DatabaseQuerying`, as the query with no
/// order, range or limit here) plus writes.
public struct DatabaseReference: DatabaseQuerying {
    public let database: Database
    public let path: Path
    let isConnectedInfo: Bool

    init(database: Database, path: Path, isConnectedInfo: Bool = false) {
        self.database = database
        self.path = path
        self.isConnectedInfo = isConnectedInfo
    }

    /// The last key; nil at the root.
    public var key: String? { isConnectedInfo ? "connected" : path.last?.string }

    /// The location as a query with no order, range or limit.
    public var asQuery: DatabaseQuery {
        DatabaseQuery(database: database, path: path, isConnectedInfo: isConnectedInfo)
    }

    public var parent: DatabaseReference? { path.parent.map { DatabaseReference(database: database, path: $0) } }

    /// The location at a relative path (`"a/b"`). `.info/connected` at the root is the client's
    /// own connection status.
    public func child(_ relative: String) throws(DatabaseError) -> DatabaseReference {
        if path.isRoot && relative.split(separator: "/") == [".info", "connected"] {
            return DatabaseReference(database: database, path: .root, isConnectedInfo: true)
        }
        do {
            return DatabaseReference(database: database, path: path.appending(try Path(relative)))
        } catch {
            throw .invalidArgument("Bad path \(relative): \(error)")
        }
    }

    /// A new child with a push id: chronologically ordered and unique without asking the server.
    public func childByAutoId() -> DatabaseReference {
        DatabaseReference(database: database, path: path.child(database.repo.nextPushID()))
    }

    // MARK: Writes (shown locally at once; each returns when the server has acknowledged it)

    public func setValue(_ value: JSONValue) async throws(DatabaseError) {
        try await perform { repo, done in repo.set(path: path, value: value, completion: done) }
    }

    /// Writes each relative path (`"a/b"`) to its value, atomically.
    public func updateChildValues(_ values: [String: JSONValue]) async throws(DatabaseError) {
        let ordered = values.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        try await perform { repo, done in repo.update(path: path, values: ordered, completion: done) }
    }

    public func removeValue() async throws(DatabaseError) { try await setValue(.null) }

    /// Sets the priority (a number, a string, or null for none).
    public func setPriority(_ priority: JSONValue) async throws(DatabaseError) {
        try await perform { repo, done in repo.setPriority(path: path, priority: priority, completion: done) }
    }

    /// Starts a write without waiting for the server; `completion` runs when it answers.
    public func setValue(_ value: JSONValue, withCompletionBlock completion: @escaping @Sendable (DatabaseError?) -> Void) {
        database.repo.set(path: path, value: value, completion: completion)
    }

    private func perform(
        _ start: (Repo, @escaping @Sendable (DatabaseError?) -> Void) -> Void
    ) async throws(DatabaseError) {
        let error = await withCheckedContinuation { (continuation: CheckedContinuation<DatabaseError?, Never>) in
            start(database.repo) { continuation.resume(returning: $0) }
        }
        if let error { throw error }
    }

    // MARK: Transactions

    /// Runs `block` on the current data and writes its result only if the data has not changed
    /// meanwhile (compare-and-set on the data's hash). When it has, the server answers
    /// `datastale` and the block runs again on fresh data, up to 25 times.
    public func runTransactionBlock(
        _ block: @Sendable (JSONValue) -> TransactionResult
    ) async throws(DatabaseError) -> TransactionOutcome {
        let repo = database.repo
        for _ in 0..<25 {
            let current = try await repo.get(path: path, query: .all)
            let snapshot = DataSnapshot(path: path, node: current)
            switch block(snapshot.value) {
            case .abort:
                return TransactionOutcome(committed: false, snapshot: snapshot)
            case .success(let value):
                // Built first: a value the tree cannot hold is refused before anything is sent.
                let written: Node
                do throws(ValidationError) {
                    written = try Node(json: value, at: path, serverValues: ServerValues(timestamp: repo.estimatedServerTime))
                } catch {
                    throw .invalidArgument(error.message)
                }
                do {
                    _ = try await repo.request(.put(path: path, data: value, hash: current.hash))
                } catch {
                    if error.serverStatus == "datastale" { continue }
                    throw error
                }
                return TransactionOutcome(committed: true, snapshot: DataSnapshot(path: path, node: written))
            }
        }
        throw .maxRetries
    }

    /// The same, in the style of the official SDKs: return the new value, or nil to abort.
    public func runTransactionBlock(
        _ block: @Sendable (JSONValue) -> JSONValue?
    ) async throws(DatabaseError) -> TransactionOutcome {
        try await runTransactionBlock { (current: JSONValue) -> TransactionResult in
            block(current).map { .success($0) } ?? .abort
        }
    }

    // MARK: onDisconnect

    /// Writes the server makes when this client's connection ends.
    public var onDisconnect: OnDisconnect { OnDisconnect(repo: database.repo, path: path) }
}
