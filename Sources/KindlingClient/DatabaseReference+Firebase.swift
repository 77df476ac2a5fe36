import Foundation
import KindlingCore
import Synchronization

/// The writes in the Firebase iOS SDK's shapes, for code ported from it: values as Foundation
/// objects (`Any?`: `[String: Any]`, numbers, strings, `NSNull`), fire-and-forget calls,
/// completion blocks `(error, reference)` run on the database's callback queue, and `async`
/// variants returning the reference. A value JSON cannot hold is a programming error where
/// Firebase treats it as one (the calls that cannot throw stop the program, as Firebase's raise
/// an exception); the `async` variants throw it instead.
extension DatabaseReference {
    /// A completion block as Firebase's writes take it.
    /// The error is a `DatabaseError`; the type is Firebase's, so blocks written for it fit.
    public typealias CompletionBlock = ((any Error)?, DatabaseReference) -> Void

    // MARK: setValue

    /// Writes `value` here without waiting for the server.
    public func setValue(_ value: Any?) {
        setValue(value, withCompletionBlock: nil)
    }

    /// Writes `value` here; `completion` runs when the server has answered.
    public func setValue(_ value: Any?, withCompletionBlock completion: CompletionBlock?) {
        let json = Self.required(value, for: "setValue")
        database.repo.set(path: path, value: json, completion: reporting(to: completion))
    }

    /// Writes `value` here and returns once the server has taken it.
    @discardableResult
    public func setValue(_ value: Any?) async throws(DatabaseError) -> DatabaseReference {
        try await setValue(try JSONValue(foundationObject: value))
    }

    /// Writes `value` with `priority` (a number, a string, or nil for none), as one write.
    public func setValue(_ value: Any?, andPriority priority: Any?, withCompletionBlock completion: CompletionBlock? = nil) {
        let json = Self.withPriority(Self.required(value, for: "setValue"), Self.required(priority, for: "setValue(andPriority:)"))
        database.repo.set(path: path, value: json, completion: reporting(to: completion))
    }

    // MARK: updateChildValues

    /// Writes each relative path (`"a/b"`) to its value, atomically, without waiting.
    public func updateChildValues(_ values: [AnyHashable: Any]) {
        updateChildValues(values, withCompletionBlock: nil)
    }

    /// The same; `completion` runs when the server has answered.
    public func updateChildValues(_ values: [AnyHashable: Any], withCompletionBlock completion: CompletionBlock?) {
        let members: [(String, JSONValue)]
        do throws(DatabaseError) {
            members = try Self.members(values)
        } catch {
            preconditionFailure("updateChildValues at \(path): \(error.localizedDescription)")
        }
        database.repo.update(path: path, values: members, completion: reporting(to: completion))
    }

    /// The same, returning once the server has taken the update.
    @discardableResult
    public func updateChildValues(_ values: [AnyHashable: Any]) async throws(DatabaseError) -> DatabaseReference {
        let members = try Self.members(values)
        return try await updateChildValues(Dictionary(members, uniquingKeysWith: { $1 }))
    }

    // MARK: removeValue and setPriority

    /// Deletes the data here without waiting.
    public func removeValue() {
        removeValue(completionBlock: nil)
    }

    /// Deletes the data here; `completion` runs when the server has answered.
    public func removeValue(completionBlock completion: CompletionBlock?) {
        database.repo.set(path: path, value: .null, completion: reporting(to: completion))
    }

    /// Sets the priority (a number, a string, or nil for none) without waiting.
    public func setPriority(_ priority: Any?, withCompletionBlock completion: CompletionBlock? = nil) {
        let json = Self.required(priority, for: "setPriority")
        database.repo.setPriority(path: path, priority: json, completion: reporting(to: completion))
    }

    /// Sets the priority and returns once the server has taken it.
    @discardableResult
    public func setPriority(_ priority: Any?) async throws(DatabaseError) -> DatabaseReference {
        try await setPriority(try JSONValue(foundationObject: priority))
    }

    /// Writes `value` with `priority` and returns once the server has taken it.
    @discardableResult
    public func setValue(_ value: Any?, andPriority priority: Any?) async throws(DatabaseError) -> DatabaseReference {
        try await setValue(Self.withPriority(try JSONValue(foundationObject: value), try JSONValue(foundationObject: priority)))
    }

    // MARK: onDisconnect, as Firebase iOS names it

    /// Queues a write of `value` here for when this client's connection ends.
    @discardableResult
    public func onDisconnectSetValue(_ value: Any?) async throws(DatabaseError) -> DatabaseReference {
        try await onDisconnect.setValue(try JSONValue(foundationObject: value))
        return self
    }

    /// Queues an update for when this client's connection ends.
    @discardableResult
    public func onDisconnectUpdateChildValues(_ values: [AnyHashable: Any]) async throws(DatabaseError) -> DatabaseReference {
        try await onDisconnect.updateChildValues(Dictionary(try Self.members(values), uniquingKeysWith: { $1 }))
        return self
    }

    /// Queues a delete here for when this client's connection ends.
    @discardableResult
    public func onDisconnectRemoveValue() async throws(DatabaseError) -> DatabaseReference {
        try await onDisconnect.removeValue()
        return self
    }

    /// Cancels what is queued here and below for when the connection ends.
    @discardableResult
    public func cancelDisconnectOperations() async throws(DatabaseError) -> DatabaseReference {
        try await onDisconnect.cancel()
        return self
    }

    /// Queues a write of `value` for when the connection ends, without waiting.
    public func onDisconnectSetValue(_ value: Any?) {
        onDisconnectSetValue(value, withCompletionBlock: nil)
    }

    /// The same; `completion` runs once the server has queued it.
    public func onDisconnectSetValue(_ value: Any?, withCompletionBlock completion: CompletionBlock?) {
        let json = Self.required(value, for: "onDisconnectSetValue")
        queueOnDisconnect(completion) { try await $0.setValue(json) }
    }

    /// Queues a write of `value` with `priority` for when the connection ends.
    public func onDisconnectSetValue(_ value: Any?, andPriority priority: Any?, withCompletionBlock completion: CompletionBlock? = nil) {
        let json = Self.withPriority(
            Self.required(value, for: "onDisconnectSetValue"), Self.required(priority, for: "onDisconnectSetValue(andPriority:)"))
        queueOnDisconnect(completion) { try await $0.setValue(json) }
    }

    /// Queues an update for when the connection ends, without waiting.
    public func onDisconnectUpdateChildValues(_ values: [AnyHashable: Any]) {
        onDisconnectUpdateChildValues(values, withCompletionBlock: nil)
    }

    /// The same; `completion` runs once the server has queued it.
    public func onDisconnectUpdateChildValues(_ values: [AnyHashable: Any], withCompletionBlock completion: CompletionBlock?) {
        let members: [String: JSONValue]
        do throws(DatabaseError) {
            members = Dictionary(try Self.members(values), uniquingKeysWith: { $1 })
        } catch {
            preconditionFailure("onDisconnectUpdateChildValues at \(path): \(error.localizedDescription)")
        }
        queueOnDisconnect(completion) { try await $0.updateChildValues(members) }
    }

    /// Queues a delete for when the connection ends, without waiting.
    public func onDisconnectRemoveValue() {
        onDisconnectRemoveValue(withCompletionBlock: nil)
    }

    /// The same; `completion` runs once the server has queued it.
    public func onDisconnectRemoveValue(withCompletionBlock completion: CompletionBlock?) {
        queueOnDisconnect(completion) { try await $0.removeValue() }
    }

    /// Cancels what is queued here and below for when the connection ends, without waiting.
    public func cancelDisconnectOperations() {
        cancelDisconnectOperations(withCompletionBlock: nil)
    }

    /// The same; `completion` runs once the server has cancelled them.
    public func cancelDisconnectOperations(withCompletionBlock completion: CompletionBlock?) {
        queueOnDisconnect(completion) { try await $0.cancel() }
    }

    /// Runs an onDisconnect request and reports its answer to `completion` on the callback queue.
    private func queueOnDisconnect(_ completion: CompletionBlock?, _ request: @escaping @Sendable (OnDisconnect) async throws -> Void) {
        let callback = completion.map { Callback(block: $0) }
        let queue = database.callbackQueue
        let onDisconnect = self.onDisconnect
        Task {
            do {
                try await request(onDisconnect)
                if let callback { queue.async { callback.block(nil, self) } }
            } catch {
                if let callback { queue.async { callback.block(error, self) } }
            }
        }
    }

    // MARK: Helpers

    /// A write's completion, moved to the callback queue and given this reference.
    func reporting(to completion: CompletionBlock?) -> @Sendable (DatabaseError?) -> Void {
        guard let completion else { return { _ in } }
        let callback = Callback(block: completion)
        let queue = database.callbackQueue
        return { error in queue.async { callback.block(error, self) } }
    }

    /// A value a call that cannot throw was given; one JSON cannot hold stops the program.
    private static func required(_ value: Any?, for call: String) -> JSONValue {
        do {
            return try JSONValue(foundationObject: value)
        } catch {
            preconditionFailure("\(call): \(error.localizedDescription)")
        }
    }

    /// An update's values by relative path.
    private static func members(_ values: [AnyHashable: Any]) throws(DatabaseError) -> [(String, JSONValue)] {
        var members: [(String, JSONValue)] = []
        for (key, value) in values {
            guard let path = key.base as? String else { throw .invalidArgument("An update's key must be a path string, not \(key.base)") }
            members.append((path, try JSONValue(foundationObject: value)))
        }
        return members.sorted { $0.0 < $1.0 }
    }

    /// `value` carrying `priority` in export form (`.value` and `.priority`).
    private static func withPriority(_ value: JSONValue, _ priority: JSONValue) -> JSONValue {
        guard priority != .null else { return value }
        if case .object(let members) = value {
            return .object(members.filter { $0.key != ".priority" } + [JSONMember(".priority", priority)])
        }
        return .object([JSONMember(".value", value), JSONMember(".priority", priority)])
    }
}

extension DatabaseReference {
    /// Takes every database of this process offline (`Database.goOffline()` on each), as
    /// Firebase's class method does.
    public static func goOffline() {
        for database in Database.live.withLock({ $0.values.compactMap(\.database) }) { database.goOffline() }
    }

    /// Brings every database of this process back online.
    public static func goOnline() {
        for database in Database.live.withLock({ $0.values.compactMap(\.database) }) { database.goOnline() }
    }
}
