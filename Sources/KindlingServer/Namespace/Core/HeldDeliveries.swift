import NIOCore
import Synchronization

/// Deliveries waiting for the log to make their writes durable, in order. The namespace's queue
/// holds them; the log's thread releases them as soon as it has synced, without a hop back onto
/// the queue. Nothing is acknowledged (or shown to a listener) before the write behind it is
/// durable, and a delivery waits behind every one held before it, so each connection keeps its
/// order.
final class HeldDeliveries: Sendable {
    private struct Held: Sendable {
        /// The last log sequence the delivery waits for; 0 waits only for what is held before it.
        let sequence: UInt64
        let delivery: PreparedDispatch
        let then: (@Sendable () -> Void)?
        /// Run instead of sending, when the writes will never be durable (`abandon`).
        let refused: (@Sendable () -> Void)?
        /// Run instead of `refused` when the writes surely never reached the log (`abandon`).
        let unstored: (@Sendable (Unstored) -> Void)?
    }

    /// What an abandoning log knows of the writes it did not make durable.
    struct Unstored: Sendable {
        /// The first record sequence that surely never reached the log.
        let from: UInt64
        /// True when another node wrote the log (so NATS is within reach and another node
        /// leads): a write can be made again through it. Otherwise the node may be cut off.
        let superseded: Bool
    }

    private let held = Mutex(CircularBuffer<Held>())
    private let metrics: ServerMetrics?

    init(metrics: ServerMetrics?) {
        self.metrics = metrics
    }

    /// Sends `delivery` (then runs `then`) once the log reports everything through `sequence`
    /// durable and everything held before it has gone. Hold a delivery before handing its
    /// writes to the log, so the log cannot report them durable before it is held.
    func send(
        _ delivery: PreparedDispatch, after sequence: UInt64, then: (@Sendable () -> Void)? = nil, refused: (@Sendable () -> Void)? = nil,
        unstored: (@Sendable (Unstored) -> Void)? = nil
    ) {
        let sentNow = held.withLock { held in
            guard held.isEmpty, sequence == 0 else {
                held.append(Held(sequence: sequence, delivery: delivery, then: then, refused: refused, unstored: unstored))
                return false
            }
            delivery.send(metrics: metrics)
            return true
        }
        if sentNow { then?() }
    }

    /// The log made everything through `sequence` durable: sends what waited for it, as one
    /// delivery (one task per event loop, not one per held write), then runs what they asked.
    func release(through sequence: UInt64) {
        let then = held.withLock { held -> [@Sendable () -> Void] in
            var released = PreparedDispatch()
            var then: [@Sendable () -> Void] = []
            while let first = held.first, first.sequence <= sequence {
                // The first is taken whole (a fan-out's thousands of deliveries are not copied).
                if released.messages == 0 { released = first.delivery } else { released.append(first.delivery) }
                if let next = first.then { then.append(next) }
                held.removeFirst()
            }
            // Sent while held, so a delivery added meanwhile cannot overtake these.
            released.send(metrics: metrics)
            return then
        }
        for next in then { next() }
    }

    /// The log will never make what is held durable (a cluster leader was deposed): drops every
    /// held delivery unsent and runs their `refused` instead, or their `unstored` when they wait
    /// for no write, or only for records from `unstored.from` on, which surely never reached the
    /// log (`ReplicatedLog.unstored`). Returns how many were dropped.
    @discardableResult
    func abandon(unstored known: Unstored? = nil) -> Int {
        let dropped = held.withLock { held -> [Held] in
            defer { held.removeAll() }
            return Array(held)
        }
        for entry in dropped {
            if let unstored = entry.unstored, let known, entry.sequence == 0 || entry.sequence >= known.from {
                unstored(known)
            } else {
                entry.refused?()
            }
        }
        return dropped.count
    }
}
