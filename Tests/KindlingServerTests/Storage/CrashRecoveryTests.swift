import Foundation
import KindlingCore
import KindlingTesting
import Testing

/// Kills the real server process at random moments while clients write, restarts it, and checks
/// that every acknowledged write survived: the tree must match the acknowledged history, give or
/// take the writes still in flight at the kill.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct CrashRecoveryTests {
    /// What one writer knows: the last value acknowledged and the last one sent.
    actor History {
        var acknowledged: [String: Int] = [:]
        var sent: [String: Int] = [:]
        var incrementsAcknowledged = 0
        var incrementsSent = 0
        var transactionsAcknowledged = 0
        var transactionsSent = 0

        func send(_ key: String, _ value: Int) { sent[key] = value }
        func acknowledge(_ key: String, _ value: Int) { acknowledged[key] = value }
        func sendIncrement() { incrementsSent += 1 }
        func acknowledgeIncrement() { incrementsAcknowledged += 1 }
        func sendTransaction() { transactionsSent += 1 }
        func acknowledgeTransaction() { transactionsAcknowledged += 1 }
    }

    @Test func everyAcknowledgedWriteSurvivesSIGKILL() async throws {
        guard FileManager.default.isExecutableFile(atPath: ServerProcess.binary) else {
            Issue.record("the kindling binary is not built at \(ServerProcess.binary)")
            return
        }
        let directory = NSTemporaryDirectory() + "kindling-crash-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = History()
        var generator = SystemRandomNumberGenerator()
        var next = 0
        for round in 0..<20 {
            let server = try await ServerProcess.start(dataDirectory: directory)
            // Check what the previous rounds acknowledged before writing more.
            let reader = try await TestClient.connect(port: server.port, namespace: "crash")
            let data =
                try await reader.request("g", .object([JSONMember("p", .string("/")), JSONMember("q", .object([]))])).last?["d"]?["b"]?["d"] ?? .null
            try await verify(data, against: history, round: round)
            await reader.abort()

            let deadline = ContinuousClock.now + .milliseconds(Int.random(in: 80...400, using: &generator))
            let port = server.port
            let starts = (0..<3).map { writer in next + writer * 1_000_000 }
            next += 3_000_000
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (writer, start) in starts.enumerated() {
                    group.addTask { try await Self.writeSequence("w\(writer)", from: start, port: port, until: deadline, history: history) }
                }
                group.addTask { try await Self.increment(port: port, until: deadline, history: history) }
                group.addTask { try await Self.transactions(port: port, until: deadline, history: history) }
                // Deliberate: the kill lands at a random moment of the writes (the deadline), not after an event.
                try await Task.sleep(until: deadline)
                await server.kill()
                try await group.waitForAll()
            }
        }
        let server = try await ServerProcess.start(dataDirectory: directory)
        let reader = try await TestClient.connect(port: server.port, namespace: "crash")
        let data =
            try await reader.request("g", .object([JSONMember("p", .string("/")), JSONMember("q", .object([]))])).last?["d"]?["b"]?["d"] ?? .null
        try await verify(data, against: history, round: 20)
        #expect(await history.incrementsAcknowledged > 0)
        #expect(await history.transactionsAcknowledged > 0)
        await server.kill()
    }

    func verify(_ data: JSONValue, against history: History, round: Int) async throws {
        for (key, acknowledged) in await history.acknowledged {
            let stored = data["seq"]?[key]?.numberValue.map { Int($0) }
            let sent = await history.sent[key] ?? acknowledged
            #expect(
                stored != nil && stored! >= acknowledged && stored! <= sent,
                "round \(round): \(key) acknowledged \(acknowledged), sent \(sent), stored \(String(describing: stored))")
        }
        let counter = Int(data["counter"]?.numberValue ?? 0)
        let (incrementsAcknowledged, incrementsSent) = (await history.incrementsAcknowledged, await history.incrementsSent)
        #expect(
            counter >= incrementsAcknowledged && counter <= incrementsSent,
            "round \(round): counter \(counter), acknowledged \(incrementsAcknowledged), sent \(incrementsSent)")
        let transactions = Int(data["tx"]?.numberValue ?? 0)
        let (transactionsAcknowledged, transactionsSent) = (await history.transactionsAcknowledged, await history.transactionsSent)
        #expect(
            transactions >= transactionsAcknowledged && transactions <= transactionsSent,
            "round \(round): tx \(transactions), acknowledged \(transactionsAcknowledged), sent \(transactionsSent)")
    }

    /// Writes increasing numbers to /seq/<key>, one at a time, until the deadline or the kill.
    static func writeSequence(_ key: String, from start: Int, port: Int, until deadline: ContinuousClock.Instant, history: History) async throws {
        guard let client = try? await TestClient.connect(port: port, namespace: "crash") else { return }
        var value = start
        while ContinuousClock.now < deadline {
            value += 1
            await history.send(key, value)
            let body = JSONValue.object([JSONMember("p", .string("/seq/\(key)")), JSONMember("d", .number(Double(value)))])
            guard let reply = try? await client.request("p", body, timeout: .seconds(5)), reply.last?["d"]?["b"]?["s"] == .string("ok") else {
                return
            }
            await history.acknowledge(key, value)
        }
        await client.abort()
    }

    /// Server-side increments of /counter.
    static func increment(port: Int, until deadline: ContinuousClock.Instant, history: History) async throws {
        guard let client = try? await TestClient.connect(port: port, namespace: "crash") else { return }
        let body = JSONValue.object([
            JSONMember("p", .string("/counter")), JSONMember("d", .object([JSONMember(".sv", .object([JSONMember("increment", .number(1))]))])),
        ])
        while ContinuousClock.now < deadline {
            await history.sendIncrement()
            guard let reply = try? await client.request("p", body, timeout: .seconds(5)), reply.last?["d"]?["b"]?["s"] == .string("ok") else {
                return
            }
            await history.acknowledgeIncrement()
        }
        await client.abort()
    }

    /// Compare-and-set transactions on /tx, as the SDKs run them: read, hash, put with the hash,
    /// retry on datastale.
    static func transactions(port: Int, until deadline: ContinuousClock.Instant, history: History) async throws {
        guard let client = try? await TestClient.connect(port: port, namespace: "crash") else { return }
        while ContinuousClock.now < deadline {
            guard
                let read = try? await client.request(
                    "g", .object([JSONMember("p", .string("/tx")), JSONMember("q", .object([]))]), timeout: .seconds(5)),
                let current = read.last?["d"]?["b"]?["d"], let node = try? Node(json: current)
            else { return }
            var value = 0
            if case .number(let number)? = node.leaf { value = Int(number) }
            await history.sendTransaction()
            let body = JSONValue.object([
                JSONMember("p", .string("/tx")), JSONMember("d", .number(Double(value + 1))), JSONMember("h", .string(node.hash)),
            ])
            guard let reply = try? await client.request("p", body, timeout: .seconds(5)), let status = reply.last?["d"]?["b"]?["s"]?.stringValue
            else { return }
            if status == "ok" {
                await history.acknowledgeTransaction()
            } else {
                // datastale: this attempt wrote nothing.
                await history.unsendTransaction()
            }
        }
        await client.abort()
    }
}

extension CrashRecoveryTests.History {
    func unsendTransaction() { transactionsSent -= 1 }
}
