/// The server's lifecycle, one state at a time: `starting` until its port is bound, `serving`,
/// `draining` once a shutdown began (readiness turns 503, connections close, the logs are
/// synced), and `stopped`.
///
/// A pure value: `KindlingServer` holds it behind a lock and does what it answers, so a second
/// `shutdown` (a signal while the CLI already stops, a test's cleanup after its own) waits for
/// the first instead of closing the port and the event loops again. A start that fails never
/// leaves `starting`: `KindlingServer.start` gives back what it acquired and throws, and no
/// server exists to shut down.
struct ServerLifecycle: Sendable {
    enum State: Sendable {
        case starting
        case serving
        /// The one drain, which every later `shutdown` waits for.
        case draining(Task<Bool, any Error>)
        /// `drained`: whether the logs and snapshots were all on disk in time.
        case stopped(drained: Bool)
    }

    /// What a call of `shutdown` does.
    enum ShutdownAction: Sendable {
        /// Wait for the drain (started by this call or an earlier one) and answer its outcome.
        case wait(Task<Bool, any Error>)
        /// Nothing: the server stopped already, with this outcome.
        case answer(drained: Bool)
    }

    private(set) var state = State.starting

    /// The port is bound: the server serves.
    mutating func bound() {
        guard case .starting = state else { return }
        state = .serving
    }

    /// A shutdown is asked. The first one drains, with the task `drain` makes (only then, so
    /// a later call starts nothing); a call while it runs waits for the same drain, and one
    /// after it answers its outcome.
    mutating func shutDown(_ drain: () -> Task<Bool, any Error>) -> ShutdownAction {
        switch state {
        case .starting, .serving:
            let task = drain()
            state = .draining(task)
            return .wait(task)
        case .draining(let task):
            return .wait(task)
        case .stopped(let drained):
            return .answer(drained: drained)
        }
    }

    /// The drain ended; `drained` is false when it did not finish in time or threw.
    mutating func drainEnded(drained: Bool) {
        guard case .draining = state else { return }
        state = .stopped(drained: drained)
    }
}
