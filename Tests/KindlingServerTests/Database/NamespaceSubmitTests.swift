import Dispatch
import KindlingCore
import Logging
import Testing

@testable import KindlingServer

/// Where a namespace runs a submitted block: on the caller's thread when it is idle, unless the
/// caller has other namespaces' blocks to hand over after it.
@Suite(.timeLimit(.minutes(1)))
struct NamespaceSubmitTests {
    static func namespace() throws -> Namespace {
        let rules = try RulesDocument.parse(#"{"rules":{".read":true,".write":true}}"#)
        return Namespace(name: "t", logger: Logger(label: "test"), rules: rules, rulesAreOpen: true)
    }

    static func write(_ value: Double) throws -> [(ConnectionID, [SessionInput])] {
        [(ConnectionID(value: -1), [.operation(number: nil, .set(path: try Path("a"), data: .number(value), precondition: nil))])]
    }

    /// A block that may not run here joins the queue and returns at once: with the queue
    /// suspended, running it here (`queue.sync`) would wait until the queue resumed. It still
    /// runs, in order, once the queue does.
    @Test func aBlockThatMayNotRunHereJoinsTheQueue() throws {
        let namespace = try Self.namespace()
        namespace.queue.suspend()
        namespace.submit(try Self.write(1), mayRunHere: false)
        namespace.submit(try Self.write(2), mayRunHere: false)
        namespace.queue.resume()
        #expect(namespace.sizeSample().root.child(at: try Path("a")) == Node(.number(2)))
        #expect(namespace.sizeSample().version == 2)
    }

    /// An idle namespace runs a block that may run here before `submit` returns (its write is
    /// there when the next block on the queue looks).
    @Test func anIdleNamespaceRunsTheBlockHere() throws {
        let namespace = try Self.namespace()
        namespace.submit(try Self.write(3))
        #expect(namespace.sizeSample().root.child(at: try Path("a")) == Node(.number(3)))
    }
}
