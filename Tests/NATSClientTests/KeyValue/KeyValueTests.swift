import KindlingTesting
import NATSClient
import NATSTesting
import Testing

@Suite(.timeLimit(.minutes(1))) struct KeyValueTests {
    @Test func exactlyOneContenderCreatesAKey() async throws {
        try await withNATSServer { server in
            var clients: [NATSClient] = []
            for _ in 0..<5 { clients.append(try await NATSClient.connect([server.url])) }
            var config = KeyValueConfig(bucket: "leases")
            config.storage = .memory
            let bucket = try await JetStream(client: clients[0]).createKeyValue(config)
            let outcomes = await withTaskGroup(of: Result<UInt64, JetStreamError>.self) { group in
                for (index, client) in clients.enumerated() {
                    group.addTask {
                        do throws(JetStreamError) {
                            let mine = try await JetStream(client: client).keyValue("leases")
                            return .success(try await mine.create("ns-1", Array("node-\(index)".utf8)))
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                var all: [Result<UInt64, JetStreamError>] = []
                for await outcome in group { all.append(outcome) }
                return all
            }
            let winners = outcomes.compactMap { try? $0.get() }
            #expect(winners.count == 1)
            for case .failure(let error) in outcomes { #expect(error.isWrongLastSequence) }
            let holder = try #require(try await bucket.get("ns-1"))
            #expect(holder.revision == winners.first)
            for client in clients { await client.close() }
        }
    }

    @Test func updateComparesRevisionsAndCreateReusesDeletedKeys() async throws {
        try await withNATSServer { server in
            let client = try await NATSClient.connect([server.url])
            var config = KeyValueConfig(bucket: "cas")
            config.history = 5
            let bucket = try await JetStream(client: client).createKeyValue(config)
            #expect(try await bucket.get("k") == nil)
            let first = try await bucket.create("k", [1])
            let second = try await bucket.update("k", [2], revision: first)
            let stale = await #expect(throws: JetStreamError.self) { try await bucket.update("k", [3], revision: first) }
            #expect(stale?.isWrongLastSequence == true)
            #expect(try await bucket.get("k")?.value == [2])
            #expect(try await bucket.get("k")?.revision == second)
            let exists = await #expect(throws: JetStreamError.self) { try await bucket.create("k", [4]) }
            #expect(exists?.isWrongLastSequence == true)
            try await bucket.delete("k")
            #expect(try await bucket.get("k") == nil)
            #expect(try await bucket.entry("k")?.operation == .delete)
            let recreated = try await bucket.create("k", [5])
            let current = try #require(try await bucket.get("k"))
            #expect(
                current.value == [5] && current.revision == recreated && current.operation == .put && current.key == "k" && current.bucket == "cas")
            try await bucket.purge("k")
            #expect(try await bucket.get("k") == nil)
            _ = try await bucket.create("k", [6])
            await #expect(throws: JetStreamError.invalidArgument("")) { try await bucket.put("bad key", [1]) }
            await client.close()
        }
    }

    @Test func anEntryExpiresAfterTheTTLAndCanBeCreatedAgain() async throws {
        try await withNATSServer { server in
            let client = try await NATSClient.connect([server.url])
            var config = KeyValueConfig(bucket: "ttl")
            config.ttl = .seconds(2)
            let bucket = try await JetStream(client: client).createKeyValue(config)
            let started = ContinuousClock.now
            _ = try await bucket.create("lease", Array("a".utf8))
            var contenderWon = true
            do {
                _ = try await bucket.create("lease", Array("b".utf8))
            } catch {
                contenderWon = false
            }
            // Within the TTL the entry is still there, so a second create must be refused (on a
            // machine slow enough to pass the TTL first, the entry may rightly be gone).
            if ContinuousClock.now - started < .seconds(2) {
                #expect(!contenderWon)
            }
            try await eventually(within: .seconds(30) - (ContinuousClock.now - started), every: .milliseconds(100)) {
                try await bucket.get("lease") == nil
            }
            let expiredAfter = ContinuousClock.now - started
            #expect(expiredAfter >= .milliseconds(1900) && expiredAfter < .seconds(30))
            let revision = try await bucket.create("lease", Array("b".utf8))
            #expect(try await bucket.get("lease")?.revision == revision)
            await client.close()
        }
    }

    @Test func watchSeesTheCurrentValueAndLaterChanges() async throws {
        try await withNATSServer { server in
            let client = try await NATSClient.connect([server.url])
            let bucket = try await JetStream(client: client).createKeyValue(KeyValueConfig(bucket: "watched"))
            try await bucket.put("k", [1])
            try await bucket.put("other", [9])
            let watch = try await bucket.watch("k", heartbeat: .milliseconds(500))
            try await bucket.put("k", [2])
            try await bucket.delete("k")
            var seen: [KeyValueEntry] = []
            for await entry in watch {
                seen.append(entry)
                if seen.count == 3 { break }
            }
            #expect(seen.map(\.value) == [[1], [2], []])
            #expect(seen.map(\.operation) == [.put, .put, .delete])
            await watch.stop()
            await client.close()
        }
    }
}
