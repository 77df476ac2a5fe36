import NIOCore
import Synchronization

/// The plain HTTP connections waiting for a request, oldest first when one must go: near the
/// connection limit the server closes the longest-idle of these (they hold no session and no
/// authentication) to make room for a new client rather than turning the new one away.
final class IdleConnections: Sendable {
    private struct Entry {
        var since: NIODeadline
        var channel: any Channel
    }

    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    /// Notes that `channel` waits for a request from now.
    func add(_ channel: any Channel) {
        let entry = Entry(since: .now(), channel: channel)
        entries.withLock { $0[ObjectIdentifier(channel)] = entry }
    }

    /// Notes that `channel` is busy or gone.
    func remove(_ channel: any Channel) {
        _ = entries.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// Closes the connection idle the longest; false when none is idle.
    func closeOldest() -> Bool {
        let oldest: (any Channel)? = entries.withLock { entries in
            guard let (key, entry) = entries.min(by: { $0.value.since < $1.value.since }) else { return nil }
            entries[key] = nil
            return entry.channel
        }
        guard let oldest else { return false }
        oldest.close(promise: nil)
        return true
    }

    var count: Int { entries.withLock { $0.count } }
}
