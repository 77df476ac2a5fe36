import Dispatch

/// The serial executor a namespace (an actor) runs on: a Dispatch queue, so the namespace's own
/// requests can be blocks on a queue that targets it (FIFO, and held while the namespace joins
/// its cluster) and still be checked by the compiler as isolated to the namespace.
///
/// A block on `queue`, or on a queue that targets it, is on the executor: `Namespace.enter`
/// takes it into the namespace's isolation (and `checkIsolated` lets the runtime check a task
/// that asks).
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
        queue.async { self.enter(body) }
    }

    /// Runs `body` on the namespace, as the next block of `queue`, and waits for it.
    nonisolated func runNow<T: Sendable>(_ body: @Sendable (isolated Namespace) -> T) -> T {
        queue.sync { self.enter(body) }
    }

    /// Runs `body`, isolated to the namespace, in a block of `queue` (the only callers: `run`,
    /// `runNow`, and the blocks `submit` and `expire` put on `queue` themselves).
    ///
    /// Such a block runs on the executor's queue, which `queue` targets, so it is isolated to
    /// the namespace by construction; what `body` touches the compiler checks as isolated. This
    /// is `assumeIsolated` without its run-time check, which costs about 170 ns (a look-up of
    /// the current executor, then `checkIsolated`) on every block, a write's or a read's: a
    /// debug build still makes the check, as an assertion.
    nonisolated func enter<T>(_ body: (isolated Namespace) -> T) -> T {
        #if DEBUG
        dispatchPrecondition(condition: .onQueue(executor.queue))
        #endif
        return withoutActuallyEscaping(body) { body in
            unsafeBitCast(body, to: ((Namespace) -> T).self)(self)
        }
    }
}
