import NIOCore
import Synchronization

/// A long-polling session as any event loop reaches it: the requests that carry it (on whichever
/// loop their connection is) and a WebSocket taking it over hop to the loop it lives on.
final class LongPollSession: Sendable {
    let id: String
    let password: String
    /// The namespace the session is attached to (a WebSocket taking it over must name the same).
    let namespace: Namespace
    let eventLoop: any EventLoop
    private let connection: NIOLoopBound<LongPollConnection>
    /// Completes when the session has ended (its disconnect frames then close).
    let ended: EventLoopFuture<Void>
    /// Set by the first disconnect frame: one is held per session.
    private let hasDisconnectFrame = Atomic<Bool>(false)

    init(_ connection: LongPollConnection, eventLoop: any EventLoop) {
        self.id = connection.id
        self.password = connection.password
        self.namespace = connection.namespace
        self.eventLoop = eventLoop
        self.connection = NIOLoopBound(connection, eventLoop: eventLoop)
        self.ended = connection.ended
    }

    /// Takes the session's one disconnect frame; false when one was taken already.
    func takeDisconnectFrame() -> Bool {
        hasDisconnectFrame.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
    }

    /// Whether `password` is the session's, compared in time that does not depend on where
    /// they first differ.
    func accepts(password given: String) -> Bool {
        let expected = Array(password.utf8)
        let actual = Array(given.utf8)
        guard expected.count == actual.count else { return false }
        var difference: UInt8 = 0
        for index in expected.indices { difference |= expected[index] ^ actual[index] }
        return difference == 0
    }

    func poll(_ ticket: Int, segments: [LongPollSegments.Segment], responder: LongPollResponder) {
        run { $0.poll(ticket, segments: segments, responder: responder) }
    }

    func pollGone(_ ticket: Int) { run { $0.pollGone(ticket) } }

    func disconnectFrameClosed() { run { $0.disconnectFrameClosed() } }

    func offer(_ webSocket: WebSocketTakeover) { run { $0.offer(webSocket) } }

    func webSocketAcknowledged(by webSocket: ConnectionID) { run { $0.webSocketAcknowledged(by: webSocket) } }

    func receiveFromWebSocket(_ inputs: [SessionInput], parsed: Int, from webSocket: ConnectionID) {
        run { $0.receiveFromWebSocket(inputs, parsed: parsed, from: webSocket) }
    }

    func webSocketLost(_ webSocket: ConnectionID) { run { $0.webSocketLost(webSocket) } }

    private func run(_ work: @escaping @Sendable (LongPollConnection) -> Void) {
        let connection = self.connection
        if eventLoop.inEventLoop {
            work(connection.value)
        } else {
            eventLoop.execute { work(connection.value) }
        }
    }
}
