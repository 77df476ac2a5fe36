import Foundation
import KindlingCore
@testable import KindlingServer
import KindlingTesting
import NATSClient
import NATSTesting
import Synchronization
import Testing

/// Forwarded writes through a change of leader (issue 38): the leader of a namespace is stopped
/// (a graceful shutdown, SIGKILL, or SIGSTOP) while clients of both followers write through
/// them: sets, pushes and compare-and-set increments (ETag, if-match). A follower whose write
/// went unanswered sends it again, with its id, to whoever leads next, which answers a write
/// already in the log from there. Checked: every write answered 200 (a compare-and-set 200 or
/// 412), none 503 or 504; each push stored once under the name its client got; the counter
/// holds exactly the increments answered 200; no write id twice in the log; every node and a
/// new one hold the same tree. (An extension, so it runs in the serialized suite.)
extension ClusterFaultTests {
    /// How the leader is stopped.
    enum LeaderFault: String {
        case shutdown, kill, freeze
    }

    @Test func forwardedWritesAreAnsweredOnceThroughALeaderShuttingDown() async throws {
        try await resendThrough(.shutdown)
    }

    @Test func forwardedWritesAreAnsweredOnceThroughALeaderKilled() async throws {
        try await resendThrough(.kill)
    }

    @Test func forwardedWritesAreAnsweredOnceThroughALeaderPaused() async throws {
        try await resendThrough(.freeze)
    }

    /// What the writers saw, shared with the test while they write.
    final class ResendLedger: Sendable {
        struct State {
            var stopped = false
            /// Sets: key to value; pushes: name to body; increments answered 200.
            var sets: [String: Int] = [:]
            var pushes: [String: String] = [:]
            var increments = 0
            /// Answers other than 200 (and a compare-and-set's 412), with what was sent.
            var failures: [String] = []
            /// When each writer last had a write answered 200.
            var acknowledged: [String: [ContinuousClock.Instant]] = [:]
        }

        let state = Mutex(State())
        let (acks, ack) = AsyncStream.makeStream(of: Void.self)

        var isStopped: Bool { state.withLock { $0.stopped } }

        func record(_ writer: String, _ body: (inout State) -> Void) {
            state.withLock { state in
                body(&state)
                state.acknowledged[writer, default: []].append(.now)
            }
            ack.yield()
        }

        func fail(_ text: String) { state.withLock { $0.failures.append(text) } }

        /// True once each of `writers` writers had `count` writes answered after `instant`.
        func acknowledgedAfter(_ instant: ContinuousClock.Instant, byAll writers: Int, atLeast count: Int) -> Bool {
            state.withLock { state in
                state.acknowledged.count == writers && state.acknowledged.values.allSatisfy { $0.filter { $0 > instant }.count >= count }
            }
        }
    }

    func resendThrough(_ fault: LeaderFault) async throws {
        try await Self.withNATS { nats in
            let namespace = "resend-\(fault.rawValue)"
            let directory = ClusterScratchDirectory()
            // A process to kill or pause; a server of this process to shut down.
            let process = fault == .shutdown ? nil : try await Self.startNodeProcess(nats, node: "leader", dataDirectory: directory)
            // A leader killed or paused is taken over once its lease lapses: a short one. One that
            // shuts down gives its lease back, so the lease's length is not what is tested, and
            // the default one keeps the followers' own leases from lapsing when the whole suite
            // loads the machine (twice, a follower leading after the hand-over lost its 1 s lease
            // so and answered its own clients 503 and 504).
            let leaseTime: Duration = fault == .shutdown ? .seconds(3) : .seconds(1)
            let inProcess = fault == .shutdown ? try await KindlingServer.start(Self.configuration(nats, node: "leader", leaseTime: leaseTime)) : nil
            let leaderPort = try #require(process?.port ?? inProcess?.port)
            let opened = try await TestHTTPConnection.request(port: leaderPort, "PUT", "/counter.json?ns=\(namespace)", body: "0")
            #expect(opened.status == 200, "\(opened.text) \(process?.errorOutput ?? "")")
            try await KindlingServer.run(Self.configuration(nats, node: "b", leaseTime: leaseTime)) { b in
                try await KindlingServer.run(Self.configuration(nats, node: "c", leaseTime: leaseTime)) { c in
                    let ledger = ResendLedger()
                    let writers: [(String, Int, WriterKind)] = [
                        ("set-b", b.port, .set), ("set-c", c.port, .set), ("push-b", b.port, .push), ("push-c", c.port, .push),
                        ("cas-b", b.port, .increment), ("cas-c", c.port, .increment),
                    ]
                    let running = Task {
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            for (name, port, kind) in writers {
                                group.addTask { try await Self.write(kind, as: name, port: port, namespace: namespace, ledger: ledger) }
                            }
                            try await group.waitForAll()
                        }
                    }
                    // The fault once writes flow through both followers.
                    var seen = 0
                    for await _ in ledger.acks {
                        seen += 1
                        if seen == 60 { break }
                    }
                    let faulted = ContinuousClock.now
                    switch fault {
                    case .shutdown: try await inProcess?.shutdown()
                    case .kill: await process?.kill()
                    case .freeze: await process?.freeze()
                    }
                    // Every writer has writes answered well after another node leads.
                    let resumed = try await eventually(within: .seconds(40), every: .milliseconds(200)) {
                        ledger.acknowledgedAfter(faulted + .seconds(3), byAll: writers.count, atLeast: 2)
                    }
                    ledger.state.withLock { $0.stopped = true }
                    #expect(resumed, "a writer had no write answered after the fault")
                    try await running.value
                    await process?.kill()

                    let outcome = ledger.state.withLock { $0 }
                    let answers = outcome.acknowledged.values.flatMap { $0 }.sorted()
                    let longest = zip(answers, answers.dropFirst()).map { $1 - $0 }.max() ?? .zero
                    print(
                        "resend through a leader \(fault): \(outcome.sets.count) sets, \(outcome.pushes.count) pushes, \(outcome.increments) increments answered 200; longest stretch without an answer \(longest) (lease \(leaseTime))"
                    )
                    #expect(outcome.failures.isEmpty, "\(outcome.failures)")
                    #expect(longest < .seconds(5))

                    // The batches every reader applies hold each forwarded write's id once. A
                    // void batch (a deposed leader's, stored after the batch another leader built
                    // on the same one; nats-server 2.9 can store it) is read by nobody, and may
                    // hold an id that a batch of the chain holds too: it is not counted.
                    let (client, js) = try await Self.jetStream(nats)
                    var ids: [String] = []
                    var chain = LogChain()
                    var voidBatches = 0
                    for message in try await Self.logMessages(js, namespace: namespace, after: 0) {
                        let previous = message.headers?[ReplicatedLog.previousHeader].flatMap { UInt64($0) }
                        switch chain.admit(message.sequence, previous: previous) {
                        case .apply:
                            let records = try LogSegmentReader.read(message.payload, file: "batch \(message.sequence)", repair: false).records
                            ids += records.compactMap(\.writeID)
                        case .void: voidBatches += 1
                        case .alreadyRead, .gap: Issue.record("batch \(message.sequence) builds on \(previous ?? 0), read by no node")
                        }
                    }
                    await client.close()
                    #expect(ids.count == Set(ids).count, "\(ids.count - Set(ids).count) write ids applied twice (\(voidBatches) void batches)")

                    try await KindlingServer.run(Self.configuration(nats, node: "new", leaseTime: leaseTime)) { new in
                        var trees: [JSONValue] = []
                        for port in [b.port, c.port, new.port] {
                            let tree = try await TestHTTPConnection.request(port: port, "GET", "/.json?ns=\(namespace)").json()
                            Self.checkResent(tree, outcome, port: port)
                            trees.append(tree)
                        }
                        #expect(trees.allSatisfy { $0 == trees[0] }, "the nodes disagree")
                    }
                }
            }
        }
    }

    /// What the tree must hold: every set answered, each push once under its name, and the
    /// counter at the increments answered.
    static func checkResent(_ tree: JSONValue, _ outcome: ResendLedger.State, port: Int) {
        for (key, value) in outcome.sets {
            #expect(tree["sets"]?[key]?.numberValue == Double(value), "set \(key) on port \(port)")
        }
        var pushed: [String: String] = [:]
        if case .object(let members)? = tree["pushes"] {
            for member in members { pushed[member.key] = member.value.stringValue }
        }
        #expect(pushed == outcome.pushes, "pushes on port \(port): \(pushed.count) stored, \(outcome.pushes.count) answered")
        #expect(Set(pushed.values).count == pushed.count, "a push stored twice on port \(port)")
        #expect(tree["counter"]?.numberValue == Double(outcome.increments), "counter on port \(port)")
    }

    enum WriterKind {
        case set, push, increment
    }

    /// Writes one after another on one keep-alive connection until the ledger stops: sets of
    /// `/sets/<name>-<n>`, pushes of `"<name>-<n>"` to `/pushes`, or compare-and-set increments
    /// of `/counter`. Each write waits for its answer (up to 30 s: a follower gives up after 20).
    static func write(_ kind: WriterKind, as name: String, port: Int, namespace: String, ledger: ResendLedger) async throws {
        let http = try await TestHTTPConnection.connect(port: port)
        defer { http.close() }
        var index = 0
        var counter: (value: Int, etag: String)?
        while !ledger.isStopped {
            index += 1
            switch kind {
            case .set:
                let key = "\(name)-\(index)"
                let put = try await http.request("PUT", "/sets/\(key).json?ns=\(namespace)", body: "\(index)", timeout: .seconds(30))
                guard put.status == 200 else { return ledger.fail("PUT \(key): \(put.status) \(put.text)") }
                ledger.record(name) { $0.sets[key] = index }
            case .push:
                let body = "\(name)-\(index)"
                let post = try await http.request("POST", "/pushes.json?ns=\(namespace)", body: "\"\(body)\"", timeout: .seconds(30))
                guard post.status == 200, let pushed = try? post.json()["name"]?.stringValue else {
                    return ledger.fail("POST \(body): \(post.status) \(post.text)")
                }
                ledger.record(name) { $0.pushes[pushed] = body }
            case .increment:
                if counter == nil {
                    let read = try await http.request(
                        "GET", "/counter.json?ns=\(namespace)", headers: [("X-Firebase-ETag", "true")], timeout: .seconds(30))
                    guard read.status == 200, let value = Int(read.text), let etag = read.header("etag") else {
                        return ledger.fail("GET counter: \(read.status) \(read.text)")
                    }
                    counter = (value, etag)
                }
                guard let (value, etag) = counter else { continue }
                let put = try await http.request(
                    "PUT", "/counter.json?ns=\(namespace)", headers: [("if-match", etag), ("X-Firebase-ETag", "true")], body: "\(value + 1)",
                    timeout: .seconds(30))
                switch put.status {
                case 200:
                    counter = put.header("etag").map { (value + 1, $0) }
                    ledger.record(name) { $0.increments += 1 }
                case 412:
                    // Another incrementer came first: the refusal has the value and ETag now.
                    counter = Int(put.text).flatMap { current in put.header("etag").map { (current, $0) } }
                default:
                    return ledger.fail("PUT counter \(value + 1) if-match \(etag): \(put.status) \(put.text)")
                }
            }
        }
    }
}
