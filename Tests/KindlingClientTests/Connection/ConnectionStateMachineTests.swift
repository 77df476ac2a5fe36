import Dispatch
import Foundation
import KindlingCore
import KindlingProtocol
import Synchronization
import Testing

@testable import KindlingClient

/// The SDK's connection state machine driven directly, with no socket: what it sends, and how it
/// meets a server that sends garbage.
struct ConnectionStateMachineTests {
    static let hello = #"{"t":"c","d":{"t":"h","d":{"ts":1700000000000,"v":"5","h":"localhost","s":"s1"}}}"#

    /// A machine whose socket 1 has shaken hands, with a value observer at `/rooms`.
    static func connected() -> (ConnectionStateMachine, [ConnectionStateMachine.Action]) {
        var machine = ConnectionStateMachine()
        var actions = machine.connect()
        actions +=
            machine.observe(
                path: Path(keys: [Key("rooms")]), query: .all, eventType: .value, queue: DispatchQueue(label: "test"),
                callback: { _ in }, cancel: nil
            ).1
        actions += machine.received(hello, on: 1)
        return (machine, actions)
    }

    static func sent(_ actions: [ConnectionStateMachine.Action]) -> [String] {
        actions.compactMap { action in
            if case .send(_, let message) = action { return message }
            return nil
        }
    }

    static func closeError(_ actions: [ConnectionStateMachine.Action]) -> ProtocolError?? {
        for case .close(_, let error) in actions { return .some(error) }
        return nil
    }

    @Test func theHandshakeSendsTheListensThroughTheProtocolEncoder() {
        let (machine, actions) = Self.connected()
        #expect(machine.lifecycle == .connected(id: 1))
        #expect(Self.sent(actions) == [#"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/rooms","h":""}}}"#])
        #expect(actions.contains { if case .keepAlive(1) = $0 { return true } else { return false } })
        #expect(machine.serverTimeOffset != 0)
    }

    @Test func removingTheLastObserverSendsTheUnlisten() {
        var (machine, _) = Self.connected()
        let actions = machine.removeObserver(1)
        #expect(Self.sent(actions) == [#"{"t":"d","d":{"r":2,"a":"n","b":{"p":"/rooms"}}}"#])
        #expect(machine.engine.listens.isEmpty)
    }

    @Test(arguments: [
        #"{"t":"d","d":{"r":1e300,"b":{"s":"ok","d":{}}}}"#,
        #"{"t":"d","d":{"r":-1.5,"b":{"s":"ok","d":{}}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/rooms","d":1,"t":1e300}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/a.b","d":1}}}"#,
        #"{"t":"d","d":{"a":"m","b":{"p":"/rooms","d":[1]}}}"#,
        #"{"t":"d","d":{"a":"m","b":{"p":"/rooms","d":{"a/../[":1}}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/rooms","d":{"x.y":1}}}}"#,
        #"{"t":"x","d":{}}"#,
        #"not json"#,
        "99999",
    ])
    func anUnreadableServerMessageClosesTheSocketWithTheReasonAndReconnects(message: String) throws {
        var (machine, _) = Self.connected()
        var actions = machine.received(message, on: 1)
        // A frame count is only a promise of pieces; the piece that breaks it comes next.
        if Self.closeError(actions) == nil { actions = machine.received("x", on: 1) + machine.received(message, on: 1) }
        let error = try #require(Self.closeError(actions))
        #expect(error != nil)
        #expect(machine.lifecycle == .waiting(attempt: 1))
        #expect(actions.contains { if case .reconnect = $0 { return true } else { return false } })
        // Frames still in flight from the closed socket change nothing.
        #expect(machine.received(Self.hello, on: 1).isEmpty)
    }

    @Test func aPushedNumberLikeValueIsDataNotARequestNumber() {
        var (machine, _) = Self.connected()
        let actions = machine.received(#"{"t":"d","d":{"a":"d","b":{"p":"/rooms","d":{"r":1e300}}}}"#, on: 1)
        #expect(Self.closeError(actions) == nil)
        #expect(machine.isConnected)
    }

    @Test(arguments: ["1e300", "-1e300", "-1000000000000", "0", "9007199254740991", "\"soon\"", "null"])
    func anyServerClockStillGivesPushIDs(timestamp: String) throws {
        var machine = ConnectionStateMachine()
        _ = machine.connect()
        _ = machine.received(#"{"t":"c","d":{"t":"h","d":{"ts":\#(timestamp),"v":"5","h":"x","s":"s"}}}"#, on: 1)
        #expect(machine.isConnected)
        let first = machine.nextPushID()
        let second = machine.nextPushID()
        #expect(first.string.utf8.count == 20)
        #expect(first.string < second.string)
        #expect(machine.estimatedServerTime().isFinite)
    }

    /// Runs the deliveries among `actions` (observer callbacks and completions) at once.
    static func deliverAll(_ actions: [ConnectionStateMachine.Action]) {
        for case .deliver(let delivery) in actions { delivery.work() }
    }

    @Test func aCredentialRefusedAfterAReconnectSignsOutAndDropsTheConnection() throws {
        var machine = ConnectionStateMachine()
        let connectedAlready = machine.setCredential("header.payload.signature")
        #expect(!connectedAlready)
        let states = Mutex<[Bool]>([])
        Self.deliverAll(
            machine.observeConnected(queue: DispatchQueue(label: "test")) { event in
                states.withLock { $0.append(event.snapshot.value == .bool(true)) }
            }.1)
        _ = machine.connect()
        let hello = machine.received(Self.hello, on: 1)
        Self.deliverAll(hello)
        #expect(Self.sent(hello).first?.contains(#""a":"auth""#) == true)
        #expect(states.withLock { $0 } == [false, true])

        // The server refuses the credential it took before the reconnect (it expired meanwhile).
        let refused = machine.received(#"{"t":"d","d":{"r":1,"b":{"s":"expired_token","d":"Auth token is expired."}}}"#, on: 1)
        Self.deliverAll(refused)
        #expect(machine.credential == nil)
        let close = try #require(Self.closeError(refused))
        #expect(close == nil)
        #expect(refused.contains { if case .reconnect = $0 { return true } else { return false } })
        #expect(states.withLock { $0 } == [false, true, false])

        // The next connection is anonymous: no credential goes first.
        guard case .open(let id)? = machine.connect().first else {
            Issue.record("did not reconnect")
            return
        }
        let again = machine.received(Self.hello, on: id)
        #expect(!Self.sent(again).contains { $0.contains(#""a":"auth""#) })
    }

    @Test func aCredentialReplacedWhileItsAnswerWasInFlightStays() {
        var machine = ConnectionStateMachine()
        _ = machine.setCredential("old.token.x")
        _ = machine.connect()
        _ = machine.received(Self.hello, on: 1)
        _ = machine.setCredential("new.token.y")
        let refused = machine.received(#"{"t":"d","d":{"r":1,"b":{"s":"invalid_token","d":"bad"}}}"#, on: 1)
        #expect(machine.credential == "new.token.y")
        #expect(Self.closeError(refused) == nil)
        #expect(machine.isConnected)
    }

    @Test func garbageBeforeTheHandshakeBacksOffFurtherEachTime() {
        var machine = ConnectionStateMachine()
        for expected in 1...3 {
            guard case .open(let id)? = machine.connect().first else {
                Issue.record("did not connect")
                return
            }
            let actions = machine.received("not json", on: id)
            #expect(Self.closeError(actions) != nil)
            #expect(machine.lifecycle == .waiting(attempt: expected))
        }
    }
}
