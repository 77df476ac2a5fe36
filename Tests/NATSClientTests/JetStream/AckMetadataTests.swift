import Testing

@testable import NATSClient

@Suite struct AckMetadataTests {
    private func sequences(_ reply: String) -> [UInt64]? {
        AckMetadata(replySubject: reply).map { [$0.streamSequence, $0.consumerSequence, $0.pending] }
    }

    @Test func parsesBothReplySubjectForms() {
        #expect(sequences("$JS.ACK.S.C.1.42.7.1700000000.3") == [42, 7, 3])
        #expect(sequences("$JS.ACK.dom.hash.S.C.1.42.7.1700000000.3.tok") == [42, 7, 3])
        #expect(sequences("$JS.ACK.S.C.1.x.7.1.3") == nil)
        #expect(sequences("_INBOX.x") == nil)
    }
}
