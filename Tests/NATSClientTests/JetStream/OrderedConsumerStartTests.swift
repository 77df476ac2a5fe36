import Foundation
import NATSClient
import NATSTesting
import Testing

/// The first consumer create of an ordered consumer, against a stand-in JetStream API under its
/// own prefix, so each answer (none, a refusal, a name) is the test's choice.
@Suite(.timeLimit(.minutes(1))) struct OrderedConsumerStartTests {
    /// What the stand-in API does with each create request, by its number from 1.
    private enum Answer {
        case silence
        case refuse(code: Int, errCode: Int)
        case name(String)
    }

    /// Answers creates on `TEST.API.CONSUMER.CREATE.S` as `answer` says and gives back each
    /// request's `deliver_subject`, in order.
    private func serveCreates(_ client: NATSClient, _ answer: @escaping @Sendable (Int) -> Answer) async throws -> (Task<Void, Never>, AsyncStream<String>) {
        let requests = try await client.subscribe("TEST.API.CONSUMER.CREATE.S")
        let (subjects, seen) = AsyncStream.makeStream(of: String.self)
        let task = Task {
            var count = 0
            for await request in requests {
                count += 1
                let body = (try? JSONSerialization.jsonObject(with: Data(request.payload))) as? [String: Any]
                let config = body?["config"] as? [String: Any]
                seen.yield(config?["deliver_subject"] as? String ?? "")
                guard let reply = request.reply else { continue }
                switch answer(count) {
                case .silence: break
                case .refuse(let code, let errCode):
                    try? await client.publish(reply, payload: Array(#"{"error":{"code":\#(code),"err_code":\#(errCode),"description":"refused"}}"#.utf8))
                case .name(let name):
                    try? await client.publish(reply, payload: Array(#"{"name":"\#(name)"}"#.utf8))
                }
            }
            seen.finish()
        }
        return (task, subjects)
    }

    @Test func aCreateThatGoesUnansweredIsAskedAgainAndTheReaderListensOnTheSecond() async throws {
        try await withNATSServer { server in
            let client = try await NATSClient.connect([server.url])
            let (responder, subjects) = try await serveCreates(client) { $0 == 1 ? .silence : .name("c\($0)") }
            try await client.flush()
            let js = JetStream(client: client, timeout: .milliseconds(300), apiPrefix: "TEST.API")
            let consumer = try await js.orderedConsumer(stream: "S", heartbeat: .seconds(5))
            #expect(await consumer.consumersCreated == 1)
            var asked = subjects.makeAsyncIterator()
            let first = await asked.next()
            let second = try #require(await asked.next())
            #expect(first != second)
            // The reader listens on the second create's subject: a message there without a
            // consumer's reply subject makes it recreate the consumer, which asks a third time.
            // (A stand-in cannot send a real `$JS.ACK` reply: the server drops such publishes.)
            try await client.publish(second, payload: Array("stray".utf8), reply: "not.an.ack")
            let third = await asked.next()
            #expect(third != nil && third != second)
            await consumer.stop()
            responder.cancel()
            await client.close()
        }
    }

    @Test func aRefusalIsReportedAtOnce() async throws {
        try await withNATSServer { server in
            let client = try await NATSClient.connect([server.url])
            let (responder, subjects) = try await serveCreates(client) { _ in .refuse(code: 404, errCode: JetStreamAPIError.streamNotFound) }
            try await client.flush()
            let js = JetStream(client: client, timeout: .milliseconds(300), apiPrefix: "TEST.API")
            let refused = await #expect(throws: JetStreamError.self) { try await js.orderedConsumer(stream: "S") }
            #expect(refused?.apiError?.errCode == JetStreamAPIError.streamNotFound)
            await client.close()
            responder.cancel()
            var count = 0
            for await _ in subjects { count += 1 }
            #expect(count == 1)
        }
    }

    @Test func aClusterStillElectingIsAskedAgainButNotForEver() async throws {
        try await withNATSServer { server in
            let client = try await NATSClient.connect([server.url])
            let (responder, subjects) = try await serveCreates(client) { $0 == 1 ? .refuse(code: 503, errCode: 10008) : .silence }
            try await client.flush()
            let js = JetStream(client: client, timeout: .milliseconds(200), apiPrefix: "TEST.API")
            let failed = await #expect(throws: JetStreamError.self) { try await js.orderedConsumer(stream: "S") }
            #expect(failed?.natsError == .timeout())
            await client.close()
            responder.cancel()
            var count = 0
            for await _ in subjects { count += 1 }
            #expect(count == 3)
        }
    }
}
