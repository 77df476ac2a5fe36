import Dispatch
import KindlingCore
import KindlingProtocol
import KindlingSync
import Synchronization
import Testing

@testable import KindlingClient

/// The sync engine fed server messages through the connection state machine, with no socket:
/// which observers a revoked listen cancels.
struct SyncEngineTests {
    /// What the observers saw, as `type path export-text` lines, and which were cancelled.
    final class Log: Sendable {
        private let lines = Mutex<[String]>([])

        func callback(_ name: String = "") -> @Sendable (DataEvent) -> Void {
            { event in
                let prefix = name.isEmpty ? "" : "\(name) "
                self.lines.withLock { $0.append("\(prefix)\(event.type.name) \(event.snapshot.path) \(event.snapshot.exportText)") }
            }
        }

        func cancel(_ name: String) -> @Sendable (DatabaseError) -> Void {
            { error in
                var reason = "\(error)"
                if case .server(let status, _) = error { reason = status }
                self.lines.withLock { $0.append("\(name) cancelled \(reason)") }
            }
        }

        /// Everything logged so far, emptying the log.
        func take() -> [String] {
            lines.withLock { lines in
                let taken = lines
                lines = []
                return taken
            }
        }
    }

    /// A state machine with its observers' log.
    struct Harness {
        var machine = ConnectionStateMachine()
        let log = Log()
        let queue = DispatchQueue(label: "test")

        /// Runs the callbacks among `actions` at once, in order.
        func run(_ actions: [ConnectionStateMachine.Action]) {
            for case .deliver(let delivery) in actions { delivery.work() }
        }

        mutating func observe(_ path: String, _ query: Query = .all, _ type: DataEventType = .value, name: String = "") throws {
            run(
                machine.observe(
                    path: try Path(path), query: query, eventType: type, queue: queue, callback: log.callback(name),
                    cancel: log.cancel(name.isEmpty ? path : name)
                ).1)
        }

        mutating func connect() {
            _ = machine.connect()
            run(machine.received(ConnectionStateMachineTests.hello, on: 1))
        }

        /// A server push or response, as the text of its `d` payload.
        mutating func receive(_ payload: String) {
            let actions = machine.received(#"{"t":"d","d":\#(payload)}"#, on: 1)
            #expect(ConnectionStateMachineTests.closeError(actions) == nil)
            run(actions)
        }
    }

    // MARK: Revoked listens

    @Test func aRevokedQueryCancelsOnlyItsOwnObservers() throws {
        var h = Harness()
        try h.observe("items", Query(limit: QueryLimit(count: 1, fromEnd: false)), name: "first")
        try h.observe("items", Query(limit: QueryLimit(count: 1, fromEnd: true)), name: "last")
        h.connect()
        #expect(h.machine.engine.listens.map(\.tag) == [1, 2])
        _ = h.log.take()
        h.receive(#"{"a":"c","b":{"p":"/items","q":[{"l":1,"vf":"r"}]}}"#)
        #expect(h.log.take() == ["last cancelled permission_denied"])
        #expect(h.machine.engine.listens.map(\.tag) == [1])
        h.receive(#"{"a":"d","b":{"p":"/items","d":{"a":1},"t":1}}"#)
        #expect(h.log.take() == [#"first value /items {"a":1}"#])
    }

    @Test func aRevokedDefaultListenCancelsItsObserversAndListensAgainForTheFilteredOnes() throws {
        var h = Harness()
        try h.observe("items", name: "all")
        try h.observe("items", Query(limit: QueryLimit(count: 1, fromEnd: false)), name: "first")
        h.connect()
        #expect(h.machine.engine.listens.map(\.tag) == [nil])
        h.receive(#"{"a":"d","b":{"p":"/items","d":{"a":1,"b":2}}}"#)
        _ = h.log.take()
        let actions = h.machine.received(#"{"t":"d","d":{"a":"c","b":{"p":"/items"}}}"#, on: 1)
        h.run(actions)
        #expect(h.log.take() == ["all cancelled permission_denied"])
        // The limited query was served by the default listen; it needs its own listen now.
        #expect(h.machine.engine.listens.map(\.tag) == [1])
        #expect(ConnectionStateMachineTests.sent(actions).contains { $0.contains(#""a":"q""#) && $0.contains(#""t":1"#) })
    }
}
