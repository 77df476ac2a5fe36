import Foundation

/// Runs blocking work (starting a child process and reading its banner, waiting for it to exit,
/// reading a pipe to its end) on a thread of its own and waits for it without blocking.
///
/// Swift's concurrency pool has one thread per core, two on the CI machines: a test that
/// blocks one of them halves what every other test running beside it gets, and two such tests
/// stall them all, so unrelated tests with timeouts fail. Tests call this instead of blocking.
public func offPool<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
        Thread {
            continuation.resume(with: Result { try work() })
        }.start()
    }
}
