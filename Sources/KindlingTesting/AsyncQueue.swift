import Synchronization

/// A queue one producer fills from an event loop and one test task drains, waiting with a
/// timeout: nil from `next` means it timed out or the queue was finished and is empty.
final class AsyncQueue<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var waiter: (id: Int, continuation: CheckedContinuation<Element?, Never>)?
        var nextWaiterID = 0
        var finished = false
    }

    private let state = Mutex(State())

    func push(_ item: Element) {
        let waiter: CheckedContinuation<Element?, Never>? = state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter.continuation
            }
            state.items.append(item)
            return nil
        }
        waiter?.resume(returning: item)
    }

    func finish() {
        let waiter = state.withLock { state in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.continuation.resume(returning: nil)
    }

    var isFinished: Bool { state.withLock { $0.finished && $0.items.isEmpty } }

    func next(timeout: Duration) async -> Element? {
        let id = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        let timer = Task {
            try await Task.sleep(for: timeout)
            let waiter = self.state.withLock { state -> CheckedContinuation<Element?, Never>? in
                guard let waiter = state.waiter, waiter.id == id else { return nil }
                state.waiter = nil
                return waiter.continuation
            }
            waiter?.resume(returning: nil)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let immediate: Element?? = state.withLock { state in
                if !state.items.isEmpty { return .some(state.items.removeFirst()) }
                if state.finished { return .some(nil) }
                state.waiter = (id, continuation)
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }
}
