import Foundation
import KindlingCore

/// The writes in the Firebase iOS SDK's shapes, for code ported from it: values as Foundation
/// objects (`Any?`: `[String: Any]`, numbers, strings, `NSNull`), fire-and-forget calls,
/// completion blocks `(error, reference)` run on the database's callback queue, and `async`
/// variants returning the reference. A value JSON cannot hold is a programming error where
/// Firebase treats it as one (the calls that cannot throw stop the program, as Firebase's raise
/// an exception); the `async` variants throw it instead.
extension DatabaseReference {
    /// A completion block as Firebase's writes take it.
    /// The error is a `DatabaseError`; the type is Firebase's, so blocks written for it fit.
    public typealias CompletionBlock = @Sendable ((any Error)?, DatabaseReference) -> Void

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
        return self
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
        try await updateChildValues(Dictionary(members, uniquingKeysWith: { $1 }))
        return self
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

    /// Queues a write of `value` for when the connection ends; `completion` runs once queued.
    public func onDisconnectSetValue(_ value: Any?, withCompletionBlock completion: @escaping CompletionBlock) {
        let json = Self.required(value, for: "onDisconnectSetValue")
        let queue = database.callbackQueue
        Task {
            do throws(DatabaseError) {
                try await onDisconnect.setValue(json)
                queue.async { completion(nil, self) }
            } catch {
                queue.async { completion(error, self) }
            }
        }
    }

    /// Queues a delete for when the connection ends; `completion` runs once queued.
    public func onDisconnectRemoveValue(withCompletionBlock completion: @escaping CompletionBlock) {
        onDisconnectSetValue(nil, withCompletionBlock: completion)
    }

    // MARK: Helpers

    /// A write's completion, moved to the callback queue and given this reference.
    private func reporting(to completion: CompletionBlock?) -> @Sendable (DatabaseError?) -> Void {
        guard let completion else { return { _ in } }
        let queue = database.callbackQueue
        return { error in queue.async { completion(error, self) } }
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
