import Dispatch

/// A callback the sync engine decided to run: an observer's event on the observer's queue, or a
/// caller's completion (no queue: run at once, as resuming a continuation never blocks).
///
/// The shell enqueues deliveries in order inside its critical section, so observers see changes
/// in exactly the order they were made; completions without a queue run right after it.
struct Delivery: Sendable {
    let queue: DispatchQueue?
    let work: @Sendable () -> Void

    func run() {
        if let queue { queue.async(execute: work) } else { work() }
    }
}
