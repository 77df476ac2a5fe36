import Foundation
import KindlingTesting
import NATSClient
import NATSTesting
import Testing

/// The limit stops a hang, not a slow cluster: in the whole suite on two cores, with other tests'
/// clusters electing beside it, the leader-kill test took 110–123 s (7 s alone), and one
/// minute's limit cancelled it four messages from its end.
@Suite(.timeLimit(.minutes(3))) struct JetStreamTests {
    /// Creates an R3 file stream, retrying while the cluster is still settling, and waits until the
    /// stream has a leader and caught-up replicas, so the test starts from a healthy stream.
    private func createReplicatedStream(_ js: JetStream, name: String, subjects: [String]) async throws -> StreamInfo {
        var config = StreamConfig(name: name, subjects: subjects)
        config.replicas = 3
        config.storage = .file
        var lastError: JetStreamError?
        var healthy: StreamInfo?
        try await eventually(within: .seconds(20), every: .milliseconds(200)) {
            do throws(JetStreamError) {
                let info = try await js.createStream(config)
                let replicas = info.cluster?.replicas ?? []
                if info.cluster?.leader != nil, replicas.count == 2, replicas.allSatisfy(\.current) { healthy = info }
            } catch {
                // Refusals other than "temporarily unavailable" are real failures.
                if let api = error.apiError, api.code != 503 { throw error }
                lastError = error
            }
            return healthy != nil
        }
        if let healthy { return healthy }
        throw lastError ?? .malformedResponse("stream \(name) never got a leader and current replicas")
    }

    @Test func managesStreamsAndReadsMessagesBack() async throws {
        try await withNATSServer { server in
            let client = try await NATSClient.connect([server.url])
            let js = JetStream(client: client)
            var config = StreamConfig(name: "LOG", subjects: ["log.>"])
            config.storage = .memory
            config.maxMessagesPerSubject = 5
            config.maxAge = .seconds(60)
            config.allowRollupHeaders = true
            config.denyDelete = true
            config.allowDirect = true
            let created = try await js.createStream(config)
            #expect(created.config.maxAge == .seconds(60) && created.config.allowDirect && created.config.denyDelete)
            let first = try await js.publish("log.a", payload: [1], headers: NATSHeaders([("X-Trace", "t1")]))
            let second = try await js.publish("log.b", payload: [2])
            #expect(first.stream == "LOG" && first.sequence == 1 && second.sequence == 2)
            let byID = try await js.publish("log.a", payload: [3], options: PublishOptions(messageID: "m1"))
            let again = try await js.publish("log.a", payload: [3], options: PublishOptions(messageID: "m1"))
            #expect(!byID.duplicate && again.duplicate && again.sequence == byID.sequence)
            let stored = try await js.message(stream: "LOG", sequence: 1)
            #expect(stored.subject == "log.a" && stored.payload == [1] && stored.headers?["X-Trace"] == "t1")
            let last = try await js.lastMessage(stream: "LOG", subject: "log.a")
            #expect(last.sequence == 3 && last.payload == [3])
            let missing = await #expect(throws: JetStreamError.self) { try await js.message(stream: "LOG", sequence: 99) }
            #expect(missing?.apiError?.errCode == JetStreamAPIError.noMessageFound)
            config.maxMessagesPerSubject = 10
            #expect(try await js.updateStream(config).config.maxMessagesPerSubject == 10)
            #expect(try await js.streamInfo("LOG").state.messages == 3)
            try await js.deleteStream("LOG")
            let gone = await #expect(throws: JetStreamError.self) { try await js.streamInfo("LOG") }
            #expect(gone?.apiError?.errCode == JetStreamAPIError.streamNotFound)
            await client.close()
        }
    }

    @Test func purgesOneSubjectBelowASequenceOnly() async throws {
        try await withNATSServer { server in
            let client = try await NATSClient.connect([server.url])
            let js = JetStream(client: client)
            var config = StreamConfig(name: "PURGE", subjects: ["p.>"])
            config.storage = .memory
            _ = try await js.createStream(config)
            for index in 1...6 { _ = try await js.publish(index.isMultiple(of: 2) ? "p.b" : "p.a", payload: [UInt8(index)]) }
            // p.a holds 1, 3, 5 and p.b 2, 4, 6: purging p.a below 5 leaves 5 and all of p.b.
            try await js.purgeStream("PURGE", subject: "p.a", before: 5)
            var left: [UInt64] = []
            for sequence in UInt64(1)...6 where (try? await js.message(stream: "PURGE", sequence: sequence)) != nil { left.append(sequence) }
            #expect(left == [2, 4, 5, 6])
            await client.close()
        }
    }

    @Test func staleExpectedSequenceIsFencedAndStoresNothing() async throws {
        try await withNATSCluster { cluster in
            let client = try await NATSClient.connect(testOptions(cluster.urls))
            let js = JetStream(client: client, timeout: .seconds(5))
            _ = try await createReplicatedStream(js, name: "FENCE", subjects: ["fence.>"])
            let first = try await js.publish("fence.w", payload: [1], options: PublishOptions(expectedLastSequence: 0))
            let second = try await js.publish("fence.w", payload: [2], options: PublishOptions(expectedLastSequence: first.sequence))
            #expect(second.sequence == 2)
            let refused = await #expect(throws: JetStreamError.self) {
                try await js.publish("fence.w", payload: [3], options: PublishOptions(expectedLastSequence: first.sequence))
            }
            #expect(refused?.isWrongLastSequence == true)
            // The refusal names the stream's last sequence, a later one than expected: proof.
            #expect(refused?.namedLastSequence == second.sequence)
            #expect(refused?.provesLaterMessage(after: first.sequence) == true)
            let bySubject = await #expect(throws: JetStreamError.self) {
                try await js.publish("fence.other", payload: [4], options: PublishOptions(expectedLastSubjectSequence: 7))
            }
            #expect(bySubject?.isWrongLastSequence == true)
            // The subject has no message: a refusal naming 0 proves no later message.
            #expect(bySubject?.namedLastSequence == 0)
            #expect(bySubject?.provesLaterMessage(after: 7) == false)
            let info = try await js.streamInfo("FENCE")
            #expect(info.state.messages == 2 && info.state.lastSequence == 2)
            #expect(info.config.replicas == 3)
            await client.close()
        }
    }

    @Test func orderedConsumerAndAcknowledgedPublishesSurviveKillingTheStreamLeader() async throws {
        try await withNATSCluster { cluster in
            let publisherClient = try await NATSClient.connect(testOptions(cluster.urls))
            let js = JetStream(client: publisherClient, timeout: .seconds(1))
            let info = try await createReplicatedStream(js, name: "ORDERED", subjects: ["ordered.>"])
            let leader = try #require(cluster.server(named: info.cluster?.leader ?? ""))
            // The reader sits on the leader, so the kill also costs it its connection and consumer.
            let readerClient = try await NATSClient.connect(testOptions([leader.url] + cluster.urls.filter { $0 != leader.url }))
            // Five seconds for the reader's requests: creating the consumer on a stream whose
            // replicas have just formed took over a second on a loaded machine (a full test run).
            let consumer = try await JetStream(client: readerClient, timeout: .seconds(5)).orderedConsumer(
                stream: "ORDERED", heartbeat: .milliseconds(300))
            let total = 200
            var acknowledged: [UInt64: Int] = [:]
            for index in 0..<total {
                if index == total / 3 { await leader.kill() }
                while true {
                    do {
                        let ack = try await js.publish(
                            "ordered.\(index % 7)", payload: Array("m\(index)".utf8), options: PublishOptions(messageID: "id-\(index)"))
                        #expect(acknowledged[ack.sequence] == nil || acknowledged[ack.sequence] == index)
                        acknowledged[ack.sequence] = index
                        break
                    } catch let error as JetStreamError {
                        #expect(!error.isWrongLastSequence)
                        // Deliberate pacing: the publisher's pause before it retries the publish.
                        try await Task.sleep(for: .milliseconds(100))
                    }
                }
            }
            #expect(acknowledged.count == total)
            var seen: [JetStreamMessage] = []
            for await message in consumer {
                seen.append(message)
                if seen.count == total { break }
            }
            #expect(seen.map(\.streamSequence) == Array(1...UInt64(total)))
            #expect(seen.map { String(decoding: $0.payload, as: UTF8.self) } == (0..<total).map { "m\($0)" })
            let after = try await js.streamInfo("ORDERED")
            #expect(after.state.messages == UInt64(total))
            for (sequence, index) in acknowledged where index % 50 == 0 {
                #expect(try await js.message(stream: "ORDERED", sequence: sequence).payload == Array("m\(index)".utf8))
            }
            #expect(await consumer.consumersCreated >= 2)
            await consumer.stop()
            await publisherClient.close()
            await readerClient.close()
        }
    }

    @Test func orderedConsumerRecreatesALostConsumerWithoutGapsOrDuplicates() async throws {
        try await withNATSServer { server in
            let client = try await NATSClient.connect([server.url])
            let js = JetStream(client: client)
            var config = StreamConfig(name: "LOSS", subjects: ["loss"])
            config.storage = .memory
            _ = try await js.createStream(config)
            for index in 0..<50 { _ = try await js.publish("loss", payload: [UInt8(index)]) }
            let consumer = try await js.orderedConsumer(stream: "LOSS", heartbeat: .milliseconds(200))
            var iterator = consumer.makeAsyncIterator()
            var seen: [UInt64] = []
            while seen.count < 50, let message = await iterator.next() { seen.append(message.streamSequence) }
            // Delete every consumer of the stream behind the reader's back.
            let names = try await client.request("$JS.API.CONSUMER.NAMES.LOSS", timeout: .seconds(2))
            let listed = try JSONDecoder().decode(ConsumerNames.self, from: Data(names.payload)).consumers
            #expect(!listed.isEmpty)
            for name in listed { _ = try await client.request("$JS.API.CONSUMER.DELETE.LOSS.\(name)", timeout: .seconds(2)) }
            for index in 50..<100 { _ = try await js.publish("loss", payload: [UInt8(index)]) }
            while seen.count < 100, let message = await iterator.next() {
                #expect(message.payload == [UInt8(message.streamSequence - 1)])
                seen.append(message.streamSequence)
            }
            #expect(seen == Array(1...100))
            #expect(await consumer.consumersCreated >= 2)
            await consumer.stop()
            await client.close()
        }
    }

    private struct ConsumerNames: Decodable {
        var consumers: [String]
    }
}
