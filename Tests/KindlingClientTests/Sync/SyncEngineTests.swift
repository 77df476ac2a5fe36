import Dispatch
import KindlingCore
import KindlingProtocol
import KindlingSync
import Synchronization
import Testing

@testable import KindlingClient

/// The sync engine fed server messages through the connection state machine, with no socket:
/// which observers a revoked listen cancels, and what a priority-only push changes.
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
                if let status = error.serverStatus { reason = status }
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

    // MARK: Priority-only changes

    @Test func aPriorityChangeRaisesTheSpecsEventsInOrder() throws {
        var h = Harness()
        try h.observe("a", .all, .childChanged, name: "a")
        try h.observe("a", .all, .childMoved, name: "a")
        try h.observe("a", .all, .value, name: "a")
        try h.observe("a/foo", name: "foo")
        h.connect()
        h.receive(#"{"a":"d","b":{"p":"/a","d":{"foo":"bar"}}}"#)
        _ = h.log.take()
        h.receive(#"{"a":"d","b":{"p":"/a/foo/.priority","d":"qux"}}"#)
        // The spec's events for this step, in the kind order the SDKs raise them in.
        #expect(
            h.log.take() == [
                #"foo value /a/foo {".value":"bar",".priority":"qux"}"#,
                #"a child_moved /a/foo {".value":"bar",".priority":"qux"}"#,
                #"a child_changed /a/foo {".value":"bar",".priority":"qux"}"#,
                #"a value /a {"foo":{".value":"bar",".priority":"qux"}}"#,
            ])
    }

    @Test func aPriorityAtALimitedQuerysLocationKeepsItsChildren() throws {
        var h = Harness()
        try h.observe("list", Query(limit: QueryLimit(count: 2, fromEnd: false)))
        h.connect()
        h.receive(#"{"a":"d","b":{"p":"/list","d":{"a":1,"b":2},"t":1}}"#)
        h.receive(#"{"r":1,"b":{"s":"ok","d":{}}}"#)
        _ = h.log.take()
        // A filtered query carries no priority: nothing changes for it.
        h.receive(#"{"a":"d","b":{"p":"/list/.priority","d":5,"t":1}}"#)
        #expect(h.log.take().isEmpty)
        h.receive(#"{"a":"d","b":{"p":"/list/a/.priority","d":5,"t":1}}"#)
        #expect(h.log.take() == [#"value /list {"a":{".value":1,".priority":5},"b":2}"#])
    }

    @Test func aPriorityChangeUnderAPendingWriteLeavesTheServerValueForARevert() throws {
        var h = Harness()
        try h.observe("rooms")
        h.connect()
        h.receive(#"{"a":"d","b":{"p":"/rooms","d":{"x":1,"y":2}}}"#)
        let x = try Path("rooms/x")
        h.run(
            try h.machine.write(.put(path: x, data: .number(99), hash: nil), completion: { _ in }) { tree, writeID in
                tree.applyUserOverwrite(path: x, node: Node(.number(99)), writeID: writeID)
            })
        _ = h.log.take()
        h.receive(#"{"a":"d","b":{"p":"/rooms/x/.priority","d":5}}"#)
        // The write (request 2) is refused: the server's value comes back, with its new priority.
        h.receive(#"{"r":2,"b":{"s":"permission_denied","d":"denied"}}"#)
        #expect(h.log.take().last == #"value /rooms {"x":{".value":1,".priority":5},"y":2}"#)
    }
}
