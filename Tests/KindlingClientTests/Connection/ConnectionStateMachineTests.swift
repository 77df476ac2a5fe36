import Dispatch
import Foundation
import KindlingCore
import KindlingProtocol
import KindlingSync
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
        let estimate = machine.estimatedServerTime(now: Date(timeIntervalSince1970: 1_700_000_000.123456))
        #expect(estimate == estimate.rounded(.down))
    }

    /// Runs the deliveries among `actions` (observer callbacks and completions) at once.
    static func deliverAll(_ actions: [ConnectionStateMachine.Action]) {
        for case .deliver(let delivery) in actions { delivery.work() }
    }

    @Test func aCredentialRefusedAfterAReconnectSignsOutAndDropsTheConnection() throws {
        var machine = ConnectionStateMachine()
        let answers = Answers()
        let waiting = machine.authenticate("header.payload.signature", id: 7, completion: answers.record)
        #expect(waiting.contains { if case .expire(request: 7, _) = $0 { return true } else { return false } })
        let states = Mutex<[Bool]>([])
        Self.deliverAll(
            machine.observeInfo(.connected, queue: DispatchQueue(label: "test")) { event in
                states.withLock { $0.append(event.snapshot.jsonValue == .bool(true)) }
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
        #expect(answers.all == [.failure(.server(status: "expired_token", message: "Auth token is expired.", operation: "authenticate", path: "/"))])
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
        _ = machine.authenticate("old.token.x", id: 1) { _ in }
        _ = machine.connect()
        _ = machine.received(Self.hello, on: 1)
        _ = machine.authenticate("new.token.y", id: 2) { _ in }
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

    /// What completions were called with, in order.
    final class Answers: Sendable {
        private let results = Mutex<[Result<JSONValue, DatabaseError>]>([])
        var all: [Result<JSONValue, DatabaseError>] { results.withLock { $0 } }
        var record: @Sendable (Result<JSONValue, DatabaseError>) -> Void { { result in self.results.withLock { $0.append(result) } } }
    }

    @Test func anAuthenticationMadeBeforeTheConnectionIsDecidedByTheFirstOne() {
        var machine = ConnectionStateMachine()
        let answers = Answers()
        Self.deliverAll(machine.authenticate("a.b.c", id: 3, completion: answers.record))
        #expect(answers.all.isEmpty)
        _ = machine.connect()
        let hello = machine.received(Self.hello, on: 1)
        #expect(Self.sent(hello) == [#"{"t":"d","d":{"r":1,"a":"auth","b":{"cred":"a.b.c"}}}"#])
        Self.deliverAll(machine.received(#"{"t":"d","d":{"r":1,"b":{"s":"invalid_token","d":"Could not parse auth token."}}}"#, on: 1))
        #expect(
            answers.all == [.failure(.server(status: "invalid_token", message: "Could not parse auth token.", operation: "authenticate", path: "/"))])
        #expect(machine.credential == nil)
    }

    @Test func anAuthenticationWithNoConnectionFailsAsOfflineAndKeepsItsCredential() {
        var machine = ConnectionStateMachine()
        let answers = Answers()
        Self.deliverAll(machine.authenticate("a.b.c", id: 4, completion: answers.record))
        Self.deliverAll(machine.expire(4))
        #expect(answers.all == [.failure(.offline(operation: "authenticate", path: "/"))])
        #expect(machine.credential == "a.b.c")
        // A later connection still sends it first.
        _ = machine.connect()
        #expect(Self.sent(machine.received(Self.hello, on: 1)).first?.contains(#""a":"auth""#) == true)
    }

    @Test func aLaterAuthenticationCancelsAnEarlierOneStillWaiting() {
        var machine = ConnectionStateMachine()
        let first = Answers()
        let second = Answers()
        Self.deliverAll(machine.authenticate("a.b.c", id: 1, completion: first.record))
        Self.deliverAll(machine.authenticate(nil, id: 2, completion: second.record))
        #expect(first.all == [.failure(.cancelled(operation: "authenticate", path: "/"))])
        #expect(second.all == [.success(.null)])
    }

    @Test func aReadWithNoConnectionFailsAsOfflineOnlyWhileStillUnsent() throws {
        var machine = ConnectionStateMachine()
        let answers = Answers()
        let path = try Path("rooms/a")
        let asked = machine.request(.get(path: path, query: .all), id: 9, expiresOffline: true, completion: answers.record)
        #expect(
            asked.contains { if case .expire(request: 9, after: ConnectionStateMachine.connectTimeout) = $0 { return true } else { return false } })
        Self.deliverAll(machine.expire(9))
        #expect(answers.all == [.failure(.offline(operation: "get", path: "/rooms/a"))])

        // Sent on a connection: the timeout no longer applies; the answer does.
        let later = Answers()
        _ = machine.request(.get(path: path, query: .all), id: 10, expiresOffline: true, completion: later.record)
        _ = machine.connect()
        _ = machine.received(Self.hello, on: 1)
        #expect(machine.expire(10).isEmpty)
        Self.deliverAll(machine.received(#"{"t":"d","d":{"r":1,"b":{"s":"ok","d":5}}}"#, on: 1))
        #expect(later.all == [.success(.number(5))])
    }

    @Test func aCancelledRequestIsAnsweredAtOnceAndItsLateAnswerDropped() throws {
        var (machine, _) = Self.connected()
        let answers = Answers()
        _ = machine.request(.get(path: try Path("rooms"), query: .all), id: 5, completion: answers.record)
        Self.deliverAll(machine.cancel(5))
        #expect(answers.all == [.failure(.cancelled(operation: "get", path: "/rooms"))])
        Self.deliverAll(machine.received(#"{"t":"d","d":{"r":2,"b":{"s":"ok","d":1}}}"#, on: 1))
        #expect(answers.all.count == 1)
    }

    @Test func aRefusedWriteNamesItsOperationAndPath() throws {
        var (machine, _) = Self.connected()
        let errors = Mutex<[DatabaseError?]>([])
        let path = try Path("rooms/a")
        let write = try machine.write(.put(path: path, data: .number(1), hash: nil), completion: { error in errors.withLock { $0.append(error) } }) {
            tree, writeID in tree.applyUserOverwrite(path: path, node: try Node(json: .number(1)), writeID: writeID)
        }
        #expect(Self.sent(write) == [#"{"t":"d","d":{"r":2,"a":"p","b":{"p":"/rooms/a","d":1}}}"#])
        Self.deliverAll(machine.received(#"{"t":"d","d":{"r":2,"b":{"s":"permission_denied","d":"Permission denied"}}}"#, on: 1))
        let error = try #require(errors.withLock { $0.first } ?? nil)
        #expect(error == .server(status: "permission_denied", message: "Permission denied", operation: "set", path: "/rooms/a"))
        #expect(error.localizedDescription == "Set at /rooms/a was refused (permission_denied): Permission denied")
    }
}
