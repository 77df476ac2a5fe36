@testable import NATSClient
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

    /// Which replies end a publish's wait (`JetStream.publish`): all but a 10071 naming the
    /// expected sequence or an earlier one, which a stale stream leader gives first.
    @Test func onlyARefusalNamingNoLaterMessageKeepsAPublishWaiting() {
        func reply(_ text: String) -> [UInt8] { Array(text.utf8) }
        #expect(JetStream.settles(reply(#"{"stream":"KINDLING_LOG","seq":457}"#), expecting: 456))
        #expect(JetStream.settles(reply(#"{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 457"}}"#), expecting: 456))
        #expect(!JetStream.settles(reply(#"{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 70"}}"#), expecting: 456))
        #expect(!JetStream.settles(reply(#"{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 456"}}"#), expecting: 456))
        #expect(JetStream.settles(reply(#"{"error":{"code":400,"err_code":10164,"description":"wrong last sequence"}}"#), expecting: 456))
        #expect(
            JetStream.settles(
                reply(#"{"error":{"code":503,"err_code":10008,"description":"JetStream system temporarily unavailable"}}"#), expecting: 456))
    }
}
