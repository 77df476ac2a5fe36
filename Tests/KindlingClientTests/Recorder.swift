import Dispatch
import KindlingClient
import KindlingCore
import Synchronization

/// Collects events from observers so a test can wait until an expected one has arrived.
final class Recorder: Sendable {
    private let events = Mutex<[DataEvent]>([])
    let queue = DispatchQueue(label: "recorder")

    func record(_ event: DataEvent) { events.withLock { $0.append(event) } }

    var all: [DataEvent] { events.withLock { $0 } }

    /// Waits (up to 10 s) until `condition` holds for the events so far.
    func wait(
        until condition: @escaping ([DataEvent]) -> Bool, timeout: Duration = .seconds(10)
    ) async throws -> [DataEvent] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let current = all
            if condition(current) { return current }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw RecorderTimeout(events: all.map { "\($0.type.name) \($0.snapshot.path) \($0.snapshot.exportText)" })
    }

    /// Waits for a value event whose data is `json` (export form text).
    func waitForValue(_ json: String) async throws {
        _ = try await wait { $0.contains { $0.type == .value && $0.snapshot.exportText == json } }
    }
}

struct RecorderTimeout: Error, CustomStringConvertible {
    var events: [String]
    var description: String { "Timed out; events so far: \(events)" }
}

/// Polls `condition` for up to 10 s.
func eventually(_ condition: @escaping @Sendable () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + .seconds(10)
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return false
}
