import KindlingCore
import KindlingProtocol

/// Writes queued on the server to run when this client disconnects (presence, "last seen").
/// Each call returns once the server has queued it. They are queued per connection: after a
/// reconnect, queue them again (for example from an `.info/connected` observer).
public struct OnDisconnect: Sendable {
    let repo: Repo
    let path: Path

    public func setValue(_ value: JSONValue) async throws(DatabaseError) {
        _ = try await repo.request(.onDisconnectPut(path: path, data: value))
    }

    public func updateChildValues(_ values: [String: JSONValue]) async throws(DatabaseError) {
        let members = values.sorted { $0.key < $1.key }.map { JSONMember($0.key, $0.value) }
        _ = try await repo.request(.onDisconnectMerge(path: path, data: members))
    }

    public func removeValue() async throws(DatabaseError) { try await setValue(.null) }

    /// Cancels what is queued here and below.
    public func cancel() async throws(DatabaseError) {
        _ = try await repo.request(.onDisconnectCancel(path: path))
    }
}
