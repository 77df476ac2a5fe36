import Dispatch
import Foundation
import Synchronization

/// Ctrl-C (SIGINT) during an import or export: noted rather than fatal, so the work stops
/// between two steps, with its position saved and the command to resume printed.
final class InterruptSignal {
    /// Set by the signal's handler, read by the work between its steps.
    private final class Flag: Sendable {
        let raised = Atomic(false)
    }

    private let flag = Flag()
    private let source: any DispatchSourceSignal

    init() {
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { [flag] in flag.raised.store(true, ordering: .relaxed) }
        source.resume()
    }

    deinit {
        source.cancel()
        signal(SIGINT, SIG_DFL)
    }

    /// True once Ctrl-C was pressed.
    var isRaised: Bool { flag.raised.load(ordering: .relaxed) }
}
