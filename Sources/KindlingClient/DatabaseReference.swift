import Foundation
import Dispatch
import KindlingCore
import KindlingProtocol

/// A location in the database: reads and observers (`DatabaseQuerying`, as the query with no
/// order, range or limit here) plus writes.
public struct DatabaseReference: DatabaseQuerying {
    public let database: Database
    public let path: Path
    /// Set for the client's own `.info` data.
    let info: InfoPath?

    init(database: Database, path: Path, info: InfoPath? = nil) {
        self.database = database
        self.path = path
        self.info = info
    }

    /// The last key; nil at the root.
    public var key: String? { info?.rawValue ?? path.last?.string }

    /// The location as a query with no order, range or limit.
    public var asQuery: DatabaseQuery {
        DatabaseQuery(database: database, path: path, info: info, isReference: true)
    }

    public var parent: DatabaseReference? { path.parent.map { DatabaseReference(database: database, path: $0) } }

    /// The location at a relative path (`"a/b"`). `.info/connected` at the root is the client's
    /// own connection status. A path that is not valid (`"a..b"`, `"a#b"`) is a programming
    /// error and stops the program, as in the Firebase SDKs; for a path built from input, use
    /// `child(validating:)`.
    public func child(_ relative: String) -> DatabaseReference {
        do {
            return try child(validating: relative)
        } catch {
            preconditionFailure(error.localizedDescription)
        }
    }

    /// The location at a relative path; throws `.invalidArgument` for a path that is not valid.
    public func child(validating relative: String) throws(DatabaseError) -> DatabaseReference {
        if path.isRoot, let info = InfoPath(relative) {
            return DatabaseReference(database: database, path: .root, info: info)
        }
        do {
            return DatabaseReference(database: database, path: path.appending(try Path(relative)))
        } catch {
            throw .invalidArgument("Bad path \(relative): \(error)")
        }
    }

    /// The root of the database.
    public var root: DatabaseReference { DatabaseReference(database: database, path: .root) }

    /// The location's URL (`http://host:port/rooms/a?ns=NAME`), as Firebase's `url`.
    public var url: String { database.url(ofPath: info?.urlPath ?? path.description) }

    /// A new child with a push id: chronologically ordered and unique without asking the server.
    public func childByAutoId() -> DatabaseReference {
        DatabaseReference(database: database, path: path.child(database.repo.nextPushID()))
    }

    // MARK: Writes (shown locally at once; each returns when the server has acknowledged it)

    /// Writes `value` here and returns once the server has taken it.
    @discardableResult
    public func setValue(_ value: JSONValue) async throws(DatabaseError) -> DatabaseReference {
        try await perform { repo, done in repo.set(path: path, value: value, completion: done) }
        return self
    }

    /// Writes each relative path (`"a/b"`) to its value, atomically.
    @discardableResult
    public func updateChildValues(_ values: [String: JSONValue]) async throws(DatabaseError) -> DatabaseReference {
        let ordered = values.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        try await perform { repo, done in repo.update(path: path, values: ordered, completion: done) }
        return self
    }

    /// Deletes the data here and returns once the server has taken it.
    @discardableResult
    public func removeValue() async throws(DatabaseError) -> DatabaseReference { try await setValue(.null) }

    /// Sets the priority (a number, a string, or null for none).
    @discardableResult
    public func setPriority(_ priority: JSONValue) async throws(DatabaseError) -> DatabaseReference {
        try await perform { repo, done in repo.setPriority(path: path, priority: priority, completion: done) }
        return self
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

    /// Runs `block` on the current data and writes what it returns only if the data has not
    /// changed meanwhile (compare-and-set on the data's hash), as Firebase's transactions do.
    /// When it has, the server answers `datastale` and the block runs again on fresh data, up to
    /// 25 times. The first run may see a listener's data; the server's decides. The block runs
    /// on the database's `callbackQueue`, as Firebase's does. Returns whether it committed and
    /// the data after it (what the block saw, when it aborted).
    public func runTransactionBlock(
        _ block: @escaping (MutableData) -> TransactionResult
    ) async throws(DatabaseError) -> (committed: Bool, snapshot: DataSnapshot) {
        let repo = database.repo
        let callback = Callback(block: block)
        var fromCache = true
        for _ in 0..<25 {
            let current = try await repo.get(path: path, query: .all, fromCache: fromCache)
            fromCache = false
            let snapshot = DataSnapshot(path: path, node: current, database: database)
            let data = MutableData(value: snapshot.jsonValue, key: path.last?.string)
            let queue = database.callbackQueue
            let decision = await withCheckedContinuation { (continuation: CheckedContinuation<TransactionResult, Never>) in
                queue.async { continuation.resume(returning: callback.block(data)) }
            }
            if let error = decision.error { throw error }
            guard let value = decision.value else { return (false, snapshot) }
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
            return (true, DataSnapshot(path: path, node: written, database: database))
        }
        throw .maxRetries
    }

    /// The same, without waiting for the outcome.
    public func runTransactionBlock(_ block: @escaping (MutableData) -> TransactionResult) {
        runTransactionBlock(block, andCompletionBlock: nil, withLocalEvents: false)
    }

    /// The same, with Firebase's completion block (error, committed, snapshot), called on the
    /// database's callback queue; the error is a `DatabaseError`.
    public func runTransactionBlock(
        _ block: @escaping (MutableData) -> TransactionResult,
        andCompletionBlock completion: (((any Error)?, Bool, DataSnapshot?) -> Void)?
    ) {
        runTransactionBlock(block, andCompletionBlock: completion, withLocalEvents: false)
    }

    /// The same; `withLocalEvents` is accepted for Firebase's signature, and listeners see the
    /// transaction's value only once the server has taken it either way.
    public func runTransactionBlock(
        _ block: @escaping (MutableData) -> TransactionResult,
        andCompletionBlock completion: (((any Error)?, Bool, DataSnapshot?) -> Void)?,
        withLocalEvents: Bool
    ) {
        let queue = database.callbackQueue
        let transaction = Callback(block: block)
        let callback = completion.map { Callback(block: $0) }
        Task {
            do throws(DatabaseError) {
                let (committed, snapshot) = try await runTransactionBlock(transaction.block)
                if let callback { queue.async { callback.block(nil, committed, snapshot) } }
            } catch {
                if let callback { queue.async { callback.block(error, false, nil) } }
            }
        }
    }

    /// Kindling's typed transaction: the block gets the current data as `JSONValue` and returns
    /// the new value, or nil to abort.
    public func runTransaction(
        _ block: @escaping (JSONValue) -> JSONValue?
    ) async throws(DatabaseError) -> (committed: Bool, snapshot: DataSnapshot) {
        try await runTransactionBlock { data in block(data.jsonValue).map { .success($0) } ?? .abort() }
    }

    // MARK: onDisconnect

    /// Writes the server makes when this client's connection ends.
    public var onDisconnect: OnDisconnect { OnDisconnect(repo: database.repo, path: path) }
}
