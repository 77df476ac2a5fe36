import Dispatch
import KindlingClient
import KindlingCore
import KindlingTesting
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
        var current: [DataEvent] = []
        if try await eventually(
            within: timeout, every: .milliseconds(10),
            {
                current = all; return condition(current)
            })
        {
            return current
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
