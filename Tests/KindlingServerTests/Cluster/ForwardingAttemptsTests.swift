import Testing

@testable import KindlingServer

/// A follower's decision, after each attempt at a forwarded write, to take the answer, send the
/// write again or give up, without NATS or a clock.
@Suite
struct ForwardingAttemptsTests {
    let start = ContinuousClock.now

    func attempts(lease: Duration = .seconds(2)) -> ForwardingAttempts {
        ForwardingAttempts(now: start, leaseTime: lease, overall: .seconds(20))
    }

    @Test func aLeadersAnswerIsTaken() {
        var attempts = attempts()
        guard case .answer(.committed(let sequence, _)) = attempts.decide(.answered(.committed(sequence: 4, pushed: nil)), now: start) else {
            Issue.record("a committed write is answered")
            return
        }
        #expect(sequence == 4)
        // A refusal that decided the write (its rules, its precondition) is the answer too.
        guard case .answer(.refused(.preconditionFailed)) = attempts.decide(.answered(.refused(.preconditionFailed(current: nil))), now: start)
        else {
            Issue.record("a precondition failure is answered")
            return
        }
    }

    @Test func aTimeoutIsSentAgainAtOnceAndMayBeStored() {
        var attempts = attempts()
        guard case .retry(let pause) = attempts.decide(.timedOut, now: start + .seconds(2)) else {
            Issue.record("a timed-out attempt is sent again")
            return
        }
        #expect(pause == .zero)
        #expect(attempts.mayBeStored)
    }

    @Test func nobodyServingIsAskedAgainAfterAGrowingPause() {
        var attempts = attempts()
        var pauses: [Duration] = []
        for _ in 0..<7 {
            guard case .retry(let pause) = attempts.decide(.noResponders, now: start) else {
                Issue.record("no responders is asked again")
                return
            }
            pauses.append(pause)
        }
        #expect(pauses == [50, 100, 200, 250, 250, 250, 250].map { Duration.milliseconds($0) })
        #expect(!attempts.mayBeStored)
        // A timeout between resets the pause.
        _ = attempts.decide(.timedOut, now: start)
        guard case .retry(let pause) = attempts.decide(.noResponders, now: start) else {
            Issue.record("no responders is asked again")
            return
        }
        #expect(pause == .milliseconds(50))
    }

    @Test func aLeaderSayingItDoesNotLeadIsAskedAgain() {
        var attempts = attempts()
        guard case .retry = attempts.decide(.answered(.refused(.unavailable(Namespace.notLeading))), now: start) else {
            Issue.record("a leader that does not lead is asked again")
            return
        }
        guard case .retry = attempts.decide(.notLeading, now: start) else {
            Issue.record("this node not leading asks again")
            return
        }
        #expect(!attempts.mayBeStored)
        // Any other unavailability is the leader's answer.
        guard case .answer(.refused(.unavailable)) = attempts.decide(.answered(.refused(.unavailable("storage failing"))), now: start) else {
            Issue.record("another unavailability is answered")
            return
        }
    }

    @Test func aLostConnectionOrALostLeadershipMayHaveStoredTheWrite() {
        var lost = attempts()
        guard case .retry = lost.decide(.failed, now: start) else {
            Issue.record("a failed request is sent again")
            return
        }
        #expect(lost.mayBeStored)
        var left = attempts()
        guard case .retry = left.decide(.leftUnconfirmed, now: start) else {
            Issue.record("a write this node stopped leading for is sent again")
            return
        }
        #expect(left.mayBeStored)
        // A leader that was deposed before the log confirmed the write says so: sent again.
        var deposed = attempts()
        guard case .retry = deposed.decide(.answered(.refused(.unconfirmed)), now: start) else {
            Issue.record("a write its leader could not confirm is sent again")
            return
        }
        #expect(deposed.mayBeStored)
    }

    @Test func theDeadlineEndsTheAttempts() {
        var attempts = attempts()
        #expect(attempts.timeout(now: start) == .seconds(2))
        // The last attempt waits only until the deadline.
        #expect(attempts.timeout(now: start + .milliseconds(19_500)) == .milliseconds(500))
        #expect(attempts.timeout(now: start + .seconds(20)) == nil)
        // Nobody ever answered: nothing was written, so the client may resend (503).
        guard case .giveUp(.unavailable(let message)) = attempts.decide(.noResponders, now: start + .milliseconds(19_990)) else {
            Issue.record("the deadline gives up")
            return
        }
        #expect(message == ForwardingAttempts.noLeader)
        // Once an attempt may have stored the write, giving up says so (504).
        _ = attempts.decide(.timedOut, now: start + .seconds(10))
        guard case .giveUp(.unconfirmed) = attempts.decide(.timedOut, now: start + .seconds(20)) else {
            Issue.record("a timeout at the deadline is unconfirmed")
            return
        }
        guard case .unconfirmed = attempts.refusalAtDeadline else {
            Issue.record("the deadline's refusal is unconfirmed")
            return
        }
    }

    @Test func anAttemptWaitsAboutTheLeaseTime() {
        #expect(attempts(lease: .seconds(2)).attemptTimeout == .seconds(2))
        #expect(attempts(lease: .milliseconds(300)).attemptTimeout == .seconds(1))
        #expect(attempts(lease: .seconds(30)).attemptTimeout == .seconds(5))
    }
}
