import Dispatch

/// The serial executor a namespace (an actor) runs on: a Dispatch queue, so the namespace's own
/// requests can be blocks on a queue that targets it (FIFO, and held while the namespace joins
/// its cluster) and still be checked by the compiler as isolated to the namespace.
///
/// A block on `queue`, or on a queue that targets it, enters the namespace with
/// `Namespace.assumeIsolated`, which asks `checkIsolated`: the runtime, not a comment, refuses
/// one that runs anywhere else.
final class NamespaceExecutor: SerialExecutor {
    let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}

extension Namespace {
    /// Runs `body` on the namespace, as the next block of `queue`.
    nonisolated func run(_ body: @escaping @Sendable (isolated Namespace) -> Void) {
        queue.async { self.assumeIsolated(body) }
    }

    /// Runs `body` on the namespace, as the next block of `queue`, and waits for it.
    nonisolated func runNow<T: Sendable>(_ body: @Sendable (isolated Namespace) -> T) -> T {
        queue.sync { self.assumeIsolated(body) }
    }
}
