import NIOCore
import Synchronization

/// The server's long-polling sessions by id: where each request at `/.lp` and each WebSocket
/// that takes a session over (`s=`) finds its session. At most `limit` at once (the connection
/// limit: each session is a realtime connection), so a flood of `start` requests is refused
/// rather than held.
final class LongPollSessions: Sendable {
    private let sessions = Mutex<[String: LongPollSession]>([:])
    private let tickets = Atomic<Int>(0)
    let limit: Int

    init(limit: Int) { self.limit = max(1, limit) }

    /// Registers a new session; false when `limit` are open already.
    func add(_ session: LongPollSession) -> Bool {
        sessions.withLock { all in
            guard all.count < limit else { return false }
            all[session.id] = session
            return true
        }
    }

    func remove(_ id: String) {
        _ = sessions.withLock { $0.removeValue(forKey: id) }
    }

    /// The session with this id, if it is open.
    func session(_ id: String) -> LongPollSession? {
        sessions.withLock { $0[id] }
    }

    var count: Int { sessions.withLock { $0.count } }

    /// A number for one poll, unique in the server.
    func nextTicket() -> Int {
        tickets.wrappingAdd(1, ordering: .relaxed).newValue
    }
}
