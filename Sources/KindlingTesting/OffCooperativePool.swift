import Dispatch

/// Runs `work` on a Dispatch worker thread and waits for its result without holding a thread of
/// Swift's cooperative pool. That pool has one thread per core and runs every test of the
/// process: a test that spends seconds of CPU on it (building a 250 MB body, say) stalls the
/// other tests' timers and awaits for as long, and their time limits and waits then fail for
/// nothing they did.
public func offCooperativePool<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: work()) }
    }
}
