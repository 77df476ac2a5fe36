import NATSClient
import Testing

/// Which wrong-last-sequence refusals prove that a later message is stored: only a 10071 naming
/// a sequence after the one expected. A stream leader back from a partition refuses from its old
/// store while the real leader stores the publish.
struct JetStreamErrorTests {
    static func refusal(_ errCode: Int, _ description: String) -> JetStreamError {
        .api(JetStreamAPIError(code: 400, errCode: errCode, description: description))
    }

    @Test func aRefusalNamingALaterSequenceProvesALaterMessage() {
        let error = Self.refusal(JetStreamAPIError.wrongLastSequence, "wrong last sequence: 457")
        #expect(error.isWrongLastSequence)
        #expect(error.namedLastSequence == 457)
        #expect(error.provesLaterMessage(after: 456))
        #expect(!error.provesLaterMessage(after: 457))
    }

    @Test func aRefusalNamingAnEarlierSequenceProvesNothing() {
        // What a stale stream leader answers: its store ends before the expected message.
        let error = Self.refusal(JetStreamAPIError.wrongLastSequence, "wrong last sequence: 70")
        #expect(error.isWrongLastSequence)
        #expect(!error.provesLaterMessage(after: 455))
    }

    @Test func refusalsNamingNoSequenceProveNothing() {
        let inFlight = Self.refusal(JetStreamAPIError.wrongLastSequenceInFlight, "wrong last sequence")
        #expect(inFlight.isWrongLastSequence && inFlight.isSubjectInFlight)
        #expect(inFlight.namedLastSequence == nil)
        #expect(!inFlight.provesLaterMessage(after: 0))
        let unreadable = Self.refusal(JetStreamAPIError.wrongLastSequence, "wrong last sequence: many")
        #expect(unreadable.namedLastSequence == nil)
        #expect(!unreadable.provesLaterMessage(after: 0))
        let overflowing = Self.refusal(JetStreamAPIError.wrongLastSequence, "wrong last sequence: 99999999999999999999999")
        #expect(overflowing.namedLastSequence == nil)
        #expect(!JetStreamError.transport(.timeout()).provesLaterMessage(after: 0))
        // Another error's text naming a sequence is not read.
        #expect(Self.refusal(JetStreamAPIError.streamNotMatch, "wrong last sequence: 9").namedLastSequence == nil)
    }
}
