import Dispatch
import KindlingCore
import NIOCore
import Synchronization

/// Decodes the blocks of a snapshot's big parents on the other cores while the reading thread
/// goes on inflating the file: loading a large tree is mostly building its nodes, which
/// otherwise keeps one core busy and leaves the rest idle.
///
/// At most `inFlight` blocks wait or run at once (the reader blocks beyond that), so the copied
/// bytes held for decoding stay a few megabytes, however fast the file inflates.
///
/// `Sendable` without checks: the workers touch only the results (behind a mutex) and the
/// semaphore; `submitted` belongs to the one reading thread.
final class ParallelSnapshotBlocks: SnapshotBlockScheduler, @unchecked Sendable {
    private let queue = DispatchQueue(label: "kindling.snapshot-blocks", qos: .userInitiated, attributes: .concurrent)
    private let group = DispatchGroup()
    private let slots: DispatchSemaphore
    private let results = Mutex<[Int: Result<SnapshotBlock.Decoded, any Error>]>([:])
    private var submitted = 0

    init(inFlight: Int = 2 * System.coreCount) {
        slots = DispatchSemaphore(value: max(inFlight, 1))
    }

    func submit(_ block: SnapshotBlock) throws {
        slots.wait()
        let index = submitted
        submitted += 1
        queue.async(group: group) { [self] in
            let result = Result { try block.decode() }
            results.withLock { $0[index] = result }
            slots.signal()
        }
    }

    func finish() -> [Result<SnapshotBlock.Decoded, any Error>] {
        group.wait()
        let decoded = results.withLock { results in
            defer { results = [:] }
            return results
        }
        let count = submitted
        submitted = 0
        return (0..<count).map { index in
            guard let result = decoded[index] else { preconditionFailure("Internal inconsistency: block \(index) never decoded") }
            return result
        }
    }
}
