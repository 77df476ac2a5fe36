import KindlingCore
import Testing

@testable import KindlingServer

/// A realtime WebSocket's phases, without a socket: its start by role, a reader falling behind
/// and catching up, the close (with a frame or without), and its end.
struct WebSocketSessionStateTests {
    static let last = SessionID(connection: ConnectionID(value: 41))

    @Test func aSessionStartsByAttachingAndEndsByDetaching() {
        var state = WebSocketSessionState(role: .session(lastSession: Self.last))
        #expect(!state.isOpen && !state.isCounted)
        guard case .attach(let last) = state.start() else { Issue.record("not attached"); return }
        #expect(last == Self.last)
        #expect(state.isOpen && state.isCounted)
        guard case .detach = state.end() else { Issue.record("not detached"); return }
        #expect(!state.isCounted)
        #expect(state.end() == nil)
    }

    @Test func aConnectionThatNeverStartedHasNothingToUndo() {
        var state = WebSocketSessionState(role: .session(lastSession: nil))
        #expect(state.end() == nil)
        #expect(state.close() == nil)
    }

    @Test func aReaderThatFallsBehindIsPausedThenDisconnectedPastItsLimits() {
        var state = WebSocketSessionState(role: .session(lastSession: nil))
        _ = state.start()
        #expect(state.fellBehind(overLimit: false, budgetHolds: true) == .stopReading)
        #expect(state.phase == .readingPaused)
        // Still behind, within its limits: nothing more.
        #expect(state.fellBehind(overLimit: false, budgetHolds: true) == .none)
        #expect((state.caughtUp() as Bool))
        #expect(!(state.caughtUp() as Bool))
        #expect(state.phase == .open)
        // Over the server-wide budget while paused: disconnected, reading already stopped.
        _ = state.fellBehind(overLimit: false, budgetHolds: true)
        #expect(state.fellBehind(overLimit: false, budgetHolds: false) == .disconnect(.budget, stopReading: false))
        #expect(state.phase == .closing && !state.isOpen)
        #expect(state.fellBehind(overLimit: true, budgetHolds: true) == .none)
        #expect(state.close() == nil)

        var over = WebSocketSessionState(role: .session(lastSession: nil))
        _ = over.start()
        #expect(over.fellBehind(overLimit: true, budgetHolds: true) == .disconnect(.overLimit, stopReading: true))
    }

    @Test func aCloseFrameGoesOutOnceAndReadingResumesForIt() {
        var state = WebSocketSessionState(role: .session(lastSession: nil))
        _ = state.start()
        _ = state.fellBehind(overLimit: false, budgetHolds: true)
        #expect(state.close() == true)
        #expect(state.close() == nil)
        #expect(!(state.closeAbruptly() as Bool))
        #expect(!(state.caughtUp() as Bool))

        var idle = WebSocketSessionState(role: .session(lastSession: nil))
        _ = idle.start()
        #expect((idle.closeAbruptly() as Bool))
        #expect(idle.close() == nil)
        guard case .detach = idle.end() else { Issue.record("not detached"); return }
    }
}
