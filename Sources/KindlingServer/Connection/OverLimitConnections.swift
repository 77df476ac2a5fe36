import NIOCore
import Synchronization

/// Connections accepted over `--max-connections` only to be told so: each gets a 503 with
/// `Retry-After` in answer to its first request, so a client or load balancer knows to come back
/// rather than seeing a reset. At most `capacity` at once, as each holds a descriptor meanwhile
/// (taken from the reserve `DescriptorLimit` keeps for the server's own files, so at most a
/// quarter of it); past that a new connection is closed at once.
final class OverLimitConnections: Sendable {
    private struct State {
        var channels: Set<ObjectIdentifier> = []
    }

    private let capacity: Int
    private let state = Mutex(State())

    /// `capacity` for a connection limit of `limit`: a sixteenth of it, at least one and at most a
    /// quarter of the reserve (16).
    init(limit: Int) {
        capacity = max(1, min(DescriptorLimit.reserve / 4, limit / 16))
    }

    /// Takes `child` to be answered 503, or returns false when as many are being answered.
    func admit(_ child: any Channel) -> Bool {
        let id = ObjectIdentifier(child)
        let admitted = state.withLock { state in
            guard state.channels.count < capacity else { return false }
            state.channels.insert(id)
            return true
        }
        if admitted { child.closeFuture.whenComplete { _ in self.state.withLock { _ = $0.channels.remove(id) } } }
        return admitted
    }

    /// How many connections are being answered 503 now (tests wait for one to be let go).
    var count: Int { state.withLock { $0.channels.count } }

    /// True for a channel taken to be answered 503 (asked when its pipeline is set up).
    func contains(_ channel: any Channel) -> Bool {
        let id = ObjectIdentifier(channel)
        return state.withLock { $0.channels.contains(id) }
    }
}
