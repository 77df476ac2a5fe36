import Testing

@testable import KindlingServer

/// A reader's place in a namespace's log, without NATS: which messages continue what it
/// applied, which fork the log, and which show it missed a batch.
@Suite
struct LogChainTests {
    /// Feeds messages (stream sequence, the batch each builds on) and returns the verdicts.
    static func verdicts(_ messages: [(UInt64, UInt64?)], from head: UInt64 = 0) -> [LogChain.Verdict] {
        var chain = LogChain(head: head)
        return messages.map { chain.admit($0.0, previous: $0.1) }
    }

    @Test func batchesThatEachBuildOnTheLastOneReadAreApplied() {
        // Other namespaces' messages come between them in the stream.
        #expect(Self.verdicts([(1, 0), (4, 1), (9, 4)]) == [.apply, .apply, .apply])
        var chain = LogChain()
        _ = chain.admit(1, previous: 0)
        _ = chain.admit(4, previous: 1)
        #expect(chain.head == 4 && chain.read == 4)
    }

    @Test func aSnapshotIsWhereTheChainStarts() {
        #expect(Self.verdicts([(12, 10), (13, 12)], from: 10) == [.apply, .apply])
        // A batch the snapshot covers, delivered again, was read already.
        #expect(Self.verdicts([(10, 7), (12, 10)], from: 10) == [.alreadyRead, .apply])
    }

    @Test func aRedeliveryIsSkipped() {
        #expect(Self.verdicts([(1, 0), (2, 1), (2, 1), (1, 0), (3, 2)]) == [.apply, .apply, .alreadyRead, .alreadyRead, .apply])
    }

    /// Two leaders' batches stored after the same batch: the first stored wins for every
    /// reader; the second, and whatever was built on it, is void; the winner's successors apply.
    @Test func theSecondBatchAfterTheSameOneForksTheLogAndIsVoidWithWhatBuildsOnIt() {
        #expect(
            Self.verdicts([(1, 0), (2, 1), (3, 1), (5, 3), (6, 2)]) == [.apply, .apply, .void(previous: 1), .void(previous: 3), .apply])
        var chain = LogChain()
        for (sequence, previous) in [(1, 0), (2, 1), (3, 1)] as [(UInt64, UInt64)] { _ = chain.admit(sequence, previous: previous) }
        // The head stays at the winner; what was read moves on (a take-over waits for it).
        #expect(chain.head == 2 && chain.read == 3)
        // A new leader builds on the head, whatever the subject's last message is.
        #expect(chain.admit(7, previous: 2) == .apply)
        // A void batch found before the head moved on is still void after it.
        #expect(chain.admit(8, previous: 3) == .void(previous: 3))
    }

    /// A batch built on one this reader never read, nor found void: it missed a batch (a
    /// consumer that skipped one, or the log purged behind it) and must not serve past it.
    @Test func aBatchBuiltOnOneNeverReadIsAGap() {
        #expect(Self.verdicts([(1, 0), (5, 3)]) == [.apply, .gap(previous: 3)])
        var chain = LogChain()
        _ = chain.admit(1, previous: 0)
        let before = chain
        // A gap changes nothing: the reader starts over.
        #expect(chain.admit(5, previous: 3) == .gap(previous: 3))
        #expect(chain == before)
        // The log read from its start, purged up to a batch it never saw.
        #expect(Self.verdicts([(40, 38)]) == [.gap(previous: 38)])
    }

    /// Batches written before batches named their predecessor apply as they come, and the
    /// first one that names it builds on the last of them.
    @Test func batchesThatNameNoPredecessorApply() {
        #expect(Self.verdicts([(1, nil), (2, nil), (4, 2)]) == [.apply, .apply, .apply])
    }
}
