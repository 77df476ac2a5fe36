import Synchronization

/// The normal clients' write-to-event latencies (nanoseconds) since the last reading, shared by
/// every listener's event loop and the soak's monitor.
final class SoakSamples: Sendable {
    private let samples = Mutex<[UInt64]>([])

    func record(_ nanoseconds: UInt64) { samples.withLock { $0.append(nanoseconds) } }

    /// The samples since the last call, and a fresh start.
    func take() -> [UInt64] {
        samples.withLock { taken in
            defer { taken = [] }; return taken
        }
    }
}
