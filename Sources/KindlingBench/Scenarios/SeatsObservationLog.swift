import Synchronization

/// One observer's `SeatsObservation`, written on its event loop and read at the end.
final class SeatsObservationLog: Sendable {
    private let state: Mutex<SeatsObservation>

    init(locations: Int) {
        state = Mutex(SeatsObservation(locations: locations))
    }

    func update(_ body: (inout SeatsObservation) -> Void) {
        state.withLock { body(&$0) }
    }

    var snapshot: SeatsObservation { state.withLock { $0 } }
}
