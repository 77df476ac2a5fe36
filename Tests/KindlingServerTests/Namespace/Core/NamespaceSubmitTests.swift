import Dispatch
import KindlingCore
import Logging
import Synchronization
import Testing

@testable import KindlingServer

/// A block its caller may not run on its own thread (it has other namespaces' blocks to hand
/// over after it) joins the namespace's queue, even when the namespace is idle.
@Suite(.timeLimit(.minutes(1)))
struct NamespaceSubmitTests {
    static func namespace() throws -> Namespace {
        let rules = try RulesDocument.parse(#"{"rules":{".read":true,".write":true}}"#)
        return Namespace(name: "t", logger: Logger(label: "test"), rules: rules, rulesAreOpen: true)
    }

    static func write(_ value: Double) throws -> [(ConnectionID, [SessionInput])] {
        [(ConnectionID(value: -1), [.operation(number: nil, .set(path: try Path("a"), data: .number(value), precondition: nil))])]
    }

    /// A block that may not run here joins the queue and `submit` returns at once: with the
    /// queue suspended, running it here (`queue.sync`) would wait until the queue resumed, so the
    /// submits run on another thread and are given five seconds. The blocks still run, in
    /// order, once the queue resumes.
    @Test func aBlockThatMayNotRunHereJoinsTheQueue() throws {
        let namespace = try Self.namespace()
        let first = try Self.write(1), second = try Self.write(2)
        let returned = DispatchSemaphore(value: 0)
        namespace.queue.suspend()
        DispatchQueue.global().async {
            namespace.submit(first, mayRunHere: false)
            namespace.submit(second, mayRunHere: false)
            returned.signal()
        }
        let returnedWhileSuspended = returned.wait(timeout: .now() + 5) == .success
        namespace.queue.resume()
        #expect(returnedWhileSuspended)
        if !returnedWhileSuspended { returned.wait() }
        #expect(namespace.sizeSample()?.root.child(at: try Path("a")) == Node(.number(2)))
        #expect(namespace.sizeSample()?.version == 2)
    }

    /// While the queue is held for a cluster join, the metrics' size sample does not wait for it
    /// (a scrape of `/.metrics` hung for the whole join, 30 s while NATS was out of reach).
    @Test func theSizeSampleDoesNotWaitForAQueueHeldForAJoin() throws {
        let namespace = try Self.namespace()
        namespace.queueHeld.store(true, ordering: .releasing)
        namespace.queue.suspend()
        let sampled = DispatchSemaphore(value: 0)
        let measured = Mutex<Bool?>(nil)
        DispatchQueue.global().async {
            let taken = namespace.sizeSample() != nil
            measured.withLock { $0 = taken }
            sampled.signal()
        }
        let returned = sampled.wait(timeout: .now() + 5) == .success
        namespace.queueHeld.store(false, ordering: .releasing)
        namespace.queue.resume()
        #expect(returned)
        if !returned { sampled.wait() }
        #expect(measured.withLock { $0 } == false)
        #expect(namespace.sizeSample()?.version == 0)
    }
}
