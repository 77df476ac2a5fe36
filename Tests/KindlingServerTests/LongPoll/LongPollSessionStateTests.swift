import Testing

@testable import KindlingServer

/// The long-polling session as a value: polls held and answered, the client's messages taken in
/// order, the move to a WebSocket, and the end, without sockets or clocks.
struct LongPollSessionStateTests {
    static let second: UInt64 = 1_000_000_000

    static func script(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func started() -> LongPollSessionState {
        var state = LongPollSessionState(callback: "7", maxMessageBytes: 1 << 20, now: 0)
        state.enqueue(Array(#"{"hello":1}"#.utf8))
        let start = state.started(id: "1-2", password: "pw")
        #expect(String(decoding: start, as: UTF8.self) == #"parent.pLPCommand7("start","1-2","pw");parent.pRTLPCB7(0,[{"hello":1}]);"#)
        return state
    }

    @Test func onePollIsHeldAndMessagesAnswerItInNumberedPackets() {
        var state = Self.started()
        #expect(state.poll(1, segments: [], now: Self.second) == [])
        #expect(state.heldPoll == 1)
        // A second poll: the first is answered (empty), the second held.
        #expect(state.poll(2, segments: [], now: Self.second) == [.answer(poll: 1, script: [])])
        state.enqueue(Array(#"{"a":1}"#.utf8))
        state.enqueue(Array(#"{"b":"\#u{2028}"}"#.utf8))
        #expect(state.flush() == [.answer(poll: 2, script: Self.script(#"parent.pRTLPCB7(1,[{"a":1},{"b":"\u2028"}]);"#))])
        #expect(state.heldPoll == nil)
        // Queued while no poll is held: the next poll takes it at once.
        state.enqueue(Array("{}".utf8))
        #expect(state.flush() == [])
        #expect(state.poll(3, segments: [], now: Self.second) == [.answer(poll: 3, script: Self.script("parent.pRTLPCB7(2,[{}]);"))])
        // A held poll past its limit is answered empty; one whose connection closed is forgotten.
        _ = state.poll(4, segments: [], now: Self.second)
        #expect(state.holdExpired(3) == [])
        #expect(state.holdExpired(4) == [.answer(poll: 4, script: [])])
        _ = state.poll(5, segments: [], now: Self.second)
        state.pollGone(5)
        #expect(state.heldPoll == nil)
    }

    @Test func theClientsMessagesAreTakenInOrder() {
        var state = Self.started()
        let first = LongPollSegmentsTests.segments(#"{"t":"d","d":{"r":1}}"#, from: 0, size: 8)
        let second = LongPollSegmentsTests.segments(#"{"t":"d","d":{"r":2}}"#, from: first.count, size: 8)
        #expect(state.poll(1, segments: second + first.dropFirst(), now: Self.second) == [])
        let actions = state.poll(2, segments: [first[0]], now: Self.second)
        #expect(actions == [.receive([Array(#"{"t":"d","d":{"r":1}}"#.utf8), Array(#"{"t":"d","d":{"r":2}}"#.utf8)]), .answer(poll: 1, script: [])])
        // Segments no SDK sends end the session; the poll that brought them is told to close.
        let refused = state.poll(3, segments: [.init(number: 10_000_000, total: 1, data: [])], now: Self.second)
        #expect(refused.first == .answer(poll: 3, script: Self.script(#"parent.pLPCommand7("close");"#)))
        #expect(refused.contains(.answer(poll: 2, script: Self.script(#"parent.pLPCommand7("close");"#))))
        #expect(refused.last.map { if case .end = $0 { true } else { false } } == true)
        #expect(state.phase == .ended)
    }

    @Test func aSilentClientIsGoneAfterTheLimit() {
        var state = Self.started()
        #expect(state.tick(now: LongPollSessionState.abandonedAfter) == [])
        _ = state.poll(1, segments: [], now: Self.second)
        // While a poll is held the client is there.
        #expect(state.tick(now: 100 * Self.second) == [])
        _ = state.holdExpired(1)
        #expect(state.tick(now: Self.second + LongPollSessionState.abandonedAfter) == [])
        let ended = state.tick(now: 2 * Self.second + LongPollSessionState.abandonedAfter)
        #expect(ended.count == 1 && state.phase == .ended)
        // A poll after the end is told to close.
        #expect(state.poll(2, segments: [], now: 0) == [.answer(poll: 2, script: Self.script(#"parent.pLPCommand7("close");"#))])
    }

    @Test func theSessionMovesToAWebSocketWithoutLosingOrReorderingAMessage() {
        var state = Self.started()
        _ = state.poll(1, segments: [], now: Self.second)
        #expect((state.webSocketOffered() as Bool))
        #expect(!(state.webSocketOffered() as Bool))
        #expect(state.phase == .upgrading(inputEnded: false))
        // Until the WebSocket's `a`, long-polling carries the server's messages.
        #expect(state.carriesServerMessages)
        state.enqueue(Array(#"{"before":1}"#.utf8))
        #expect(state.flush() == [.answer(poll: 1, script: Self.script(#"parent.pRTLPCB7(1,[{"before":1}]);"#))])
        _ = state.poll(2, segments: [], now: Self.second)
        // The WebSocket's `a`: `n` is the last message over long-polling.
        #expect(state.webSocketAcknowledged() == [.answer(poll: 2, script: Self.script(#"parent.pRTLPCB7(2,[{"t":"c","d":{"t":"n","d":{}}}]);"#))])
        #expect(!state.carriesServerMessages)
        #expect(state.phase == .upgraded(inputEnded: false))
        // The client's `n` over long-polling: its WebSocket requests may go, and long-polling closes
        // after the packet that carried the server's `n`.
        _ = state.poll(3, segments: [], now: Self.second)
        #expect(
            state.clientEndedTransmission() == [.releaseWebSocketInputs, .answer(poll: 3, script: Self.script(#"parent.pLPCommand7("close",2);"#))])
        #expect(state.phase == .upgraded(inputEnded: true))
        // The WebSocket closing now ends the session.
        #expect(state.webSocketLost().last.map { if case .end = $0 { true } else { false } } == true)
    }

    @Test func theClientsEndMayComeBeforeTheServersAndTheUpgradeMayFail() {
        var state = Self.started()
        #expect((state.webSocketOffered() as Bool))
        // The WebSocket closes before its `a`: the session stays on long-polling.
        #expect(state.webSocketLost() == [])
        #expect(state.phase == .polling)
        #expect((state.webSocketOffered() as Bool))
        #expect(state.webSocketAcknowledged() == [])  // no poll held: `n` waits for one
        #expect(state.clientEndedTransmission() == [.releaseWebSocketInputs])
        #expect(
            state.poll(1, segments: [], now: Self.second) == [
                .answer(poll: 1, script: Self.script(#"parent.pRTLPCB7(1,[{"t":"c","d":{"t":"n","d":{}}}]);parent.pLPCommand7("close",1);"#))
            ])
        // The client's `n` over long-polling before the WebSocket's `a` (another connection, maybe
        // another event loop): kept, and the WebSocket's requests go as soon as the switch is made.
        var early = Self.started()
        #expect(early.webSocketOffered() as Bool)
        _ = early.poll(1, segments: [], now: Self.second)
        #expect(early.clientEndedTransmission() == [])
        #expect(early.phase == .upgrading(inputEnded: true))
        #expect(
            early.webSocketAcknowledged() == [
                .releaseWebSocketInputs,
                .answer(poll: 1, script: Self.script(#"parent.pRTLPCB7(1,[{"t":"c","d":{"t":"n","d":{}}}]);parent.pLPCommand7("close",1);"#)),
            ])
        #expect(early.phase == .upgraded(inputEnded: true))
        // A client whose `n` never comes over long-polling is taken to have sent all it will.
        var silent = Self.started()
        #expect((silent.webSocketOffered() as Bool))
        _ = silent.webSocketAcknowledged()
        #expect(silent.tick(now: 2 * LongPollSessionState.abandonedAfter) == [.releaseWebSocketInputs])
    }

    @Test func theEndClosesAHeldPollOnlyWhileLongPollingCarriesTheSession() {
        var state = Self.started()
        _ = state.poll(1, segments: [], now: Self.second)
        #expect(state.end(reason: "bye") == [.answer(poll: 1, script: Self.script(#"parent.pLPCommand7("close");"#)), .end(reason: "bye")])
        #expect(state.end(reason: "again") == [])
    }
}
