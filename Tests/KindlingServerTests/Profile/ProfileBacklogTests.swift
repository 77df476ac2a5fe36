import Testing

@testable import KindlingServer

/// What one profiler stream may hold: records on their way up to the limit, the rest counted as
/// dropped until the stream tells its reader.
struct ProfileBacklogTests {
    @Test func recordsPastTheLimitAreCountedAsDropped() {
        let backlog = ProfileBacklog(limit: 10)
        #expect(backlog.admit(6))
        #expect(backlog.admit(4))
        #expect(!backlog.admit(1))
        #expect(backlog.count == 10)
        backlog.done(6)
        #expect(backlog.admit(5))
        // Taken on the way, then left out at the socket: dropped too.
        backlog.drop(5)
        #expect(backlog.takeDropped() == 6)
        #expect(backlog.takeDropped() == 0)
        #expect(backlog.count == 4)
    }

    @Test func anIdleStreamTakesABatchLargerThanTheLimit() {
        let backlog = ProfileBacklog(limit: 10)
        #expect(backlog.admit(25))
        #expect(!backlog.admit(1))
        backlog.done(25)
        #expect(backlog.count == 0)
        #expect(backlog.takeDropped() == 1)
    }
}
