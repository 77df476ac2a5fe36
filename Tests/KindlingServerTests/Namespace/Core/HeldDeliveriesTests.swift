import Synchronization
import Testing

@testable import KindlingServer

/// What waits for the log leaves only once its writes are durable, and never ahead of anything
/// held before it, whichever thread reports the sync.
struct HeldDeliveriesTests {
    /// Records the order in which held deliveries were released.
    final class Released: Sendable {
        private let names = Mutex<[String]>([])
        func note(_ name: String) -> @Sendable () -> Void { { self.names.withLock { $0.append(name) } } }
        var order: [String] { names.withLock { $0 } }
    }

    @Test func nothingHeldGoesAtOnce() {
        let held = HeldDeliveries(metrics: nil)
        let released = Released()
        held.send(PreparedDispatch(), after: 0, then: released.note("read"))
        #expect(released.order == ["read"])
    }

    @Test func aWriteWaitsForItsSyncAndLaterOutputsWaitBehindIt() {
        let held = HeldDeliveries(metrics: nil)
        let released = Released()
        held.send(PreparedDispatch(), after: 3, then: released.note("write 3"))
        // A read answered after the write: no write of its own, yet it must not overtake.
        held.send(PreparedDispatch(), after: 0, then: released.note("read"))
        held.send(PreparedDispatch(), after: 5, then: released.note("write 5"))
        held.release(through: 2)
        #expect(released.order.isEmpty)
        held.release(through: 4)
        #expect(released.order == ["write 3", "read"])
        held.release(through: 5)
        #expect(released.order == ["write 3", "read", "write 5"])
        held.send(PreparedDispatch(), after: 0, then: released.note("after"))
        #expect(released.order == ["write 3", "read", "write 5", "after"])
    }

    @Test func releasesFromAnotherThreadKeepTheOrder() async {
        let held = HeldDeliveries(metrics: nil)
        let released = Released()
        // The namespace's side holds in order while the log's side releases concurrently.
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for sequence in 1...2_000 {
                    held.send(PreparedDispatch(), after: UInt64(sequence), then: released.note("\(sequence)"))
                    if sequence % 7 == 0 { held.send(PreparedDispatch(), after: 0, then: released.note("r\(sequence)")) }
                }
            }
            group.addTask {
                var through: UInt64 = 0
                while through < 2_000 {
                    through = min(2_000, through + UInt64.random(in: 1...13))
                    held.release(through: through)
                    await Task.yield()
                }
            }
        }
        held.release(through: 2_000)
        var expected: [String] = []
        for sequence in 1...2_000 {
            expected.append("\(sequence)")
            if sequence % 7 == 0 { expected.append("r\(sequence)") }
        }
        #expect(released.order == expected)
    }

    /// A deposed leader's held writes: those that surely never reached the log (from
    /// `unstoredFrom` on, or none at all) run `unstored` where they have one, to be made again;
    /// the rest, which a batch in flight may still store, run `refused`.
    @Test func abandoningTellsWritesThatNeverReachedTheLogFromTheOthers() {
        let held = HeldDeliveries(metrics: nil)
        let released = Released()
        let superseded = Mutex<[Bool]>([])
        func unstored(_ name: String) -> @Sendable (HeldDeliveries.Unstored) -> Void {
            { unstored in
                superseded.withLock { $0.append(unstored.superseded) }
                released.note(name)()
            }
        }
        held.send(PreparedDispatch(), after: 3, refused: released.note("3 refused"), unstored: unstored("3 unstored"))
        held.send(PreparedDispatch(), after: 0, refused: released.note("read refused"), unstored: unstored("read unstored"))
        held.send(PreparedDispatch(), after: 5, refused: released.note("5 refused"), unstored: unstored("5 unstored"))
        held.send(PreparedDispatch(), after: 6, refused: released.note("6 refused"))
        #expect(held.abandon(unstored: .init(from: 4, superseded: true)) == 4)
        #expect(released.order == ["3 refused", "read unstored", "5 unstored", "6 refused"])
        #expect(superseded.withLock { $0 } == [true, true])
        // Without a point known unstored, everything is refused.
        let unknown = Released()
        held.send(PreparedDispatch(), after: 7, refused: unknown.note("7 refused"), unstored: { _ in unknown.note("7 unstored")() })
        held.abandon()
        #expect(unknown.order == ["7 refused"])
    }
}
