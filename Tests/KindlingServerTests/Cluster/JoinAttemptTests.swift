import Testing

@testable import KindlingServer

/// The race between a join's catch-up and its watchdog: the first to act wins, for good.
struct JoinAttemptTests {
    @Test func anAttemptThatJoinedCannotExpire() {
        let attempt = JoinAttempt()
        #expect(attempt.current == .catchingUp)
        #expect(attempt.join())
        #expect(!attempt.expire())
        #expect(attempt.current == .joined)
    }

    @Test func anExpiredAttemptCannotJoin() {
        let attempt = JoinAttempt()
        #expect(attempt.expire())
        #expect(!attempt.join())
        #expect(attempt.current == .expired)
    }

    @Test func eachHappensOnce() {
        let joined = JoinAttempt()
        #expect(joined.join())
        #expect(!joined.join())
        let expired = JoinAttempt()
        #expect(expired.expire())
        #expect(!expired.expire())
    }

    @Test func ofManyRacingJoinsAndExpiriesExactlyOneWins() async {
        for _ in 0..<50 {
            let attempt = JoinAttempt()
            let wins = await withTaskGroup(of: Bool.self) { group in
                for index in 0..<8 {
                    group.addTask { index % 2 == 0 ? attempt.join() : attempt.expire() }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 1)
        }
    }
}
