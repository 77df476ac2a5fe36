import Foundation
import KindlingTesting
import NATSClient
import NATSTesting
import Synchronization
import Testing

/// The first consumer create of an ordered consumer, against a stand-in JetStream API under its
/// own prefix, so each answer (none, a refusal, a name) is the test's choice. On a loaded machine
/// an answer can come after its timeout; each expectation allows for that.
@Suite(.timeLimit(.minutes(1))) struct OrderedConsumerStartTests {
    /// What the stand-in API does with each create request, by its number from 1.
    private enum Answer {
        case silence
        case refuse(code: Int, errCode: Int)
        case name(String)
    }

    /// The `deliver_subject` of every create request so far, in order. Each is recorded before
    /// the request is answered, so once a create has returned its subject is here.
    private final class Creates: Sendable {
        private let subjects = Mutex<[String]>([])

        var all: [String] { subjects.withLock { $0 } }

        func record(_ subject: String) -> Int {
            subjects.withLock {
                $0.append(subject)
                return $0.count
            }
        }

        /// Waits until at least `count` creates have arrived, or ten seconds have passed.
        func await(atLeast count: Int) async throws -> [String] {
            try await eventually(within: .seconds(10)) { all.count >= count }
            return all
        }
    }

    /// Answers creates on `TEST.API.CONSUMER.CREATE.S` as `answer` says.
    private func serveCreates(_ client: NATSClient, _ answer: @escaping @Sendable (Int) -> Answer) async throws -> (Task<Void, Never>, Creates) {
        let requests = try await client.subscribe("TEST.API.CONSUMER.CREATE.S")
        let creates = Creates()
        let task = Task {
            for await request in requests {
                let body = (try? JSONSerialization.jsonObject(with: Data(request.payload))) as? [String: Any]
                let config = body?["config"] as? [String: Any]
                let number = creates.record(config?["deliver_subject"] as? String ?? "")
                guard let reply = request.reply else { continue }
                switch answer(number) {
                case .silence: break
                case .refuse(let code, let errCode):
                    try? await client.publish(
                        reply, payload: Array(#"{"error":{"code":\#(code),"err_code":\#(errCode),"description":"refused"}}"#.utf8))
                case .name(let name):
                    try? await client.publish(reply, payload: Array(#"{"name":"\#(name)"}"#.utf8))
                }
            }
        }
        try await client.flush()
        return (task, creates)
    }

    @Test func aCreateThatGoesUnansweredIsAskedAgainAndTheReaderListensOnTheAnsweredOne() async throws {
        try await withNATSServer { server in
            let client = try await NATSClient.connect([server.url])
            let (responder, creates) = try await serveCreates(client) { $0 == 1 ? .silence : .name("c\($0)") }
            let js = JetStream(client: client, timeout: .seconds(1), apiPrefix: "TEST.API")
            let consumer = try await js.orderedConsumer(stream: "S", heartbeat: .seconds(5))
            #expect(await consumer.consumersCreated == 1)
            let asked = creates.all
            #expect(asked.count >= 2 && Set(asked).count == asked.count)
            // The last create is the answered one. A message on its subject without a consumer's
            // reply subject makes the reader recreate the consumer, which asks once more. (A
            // stand-in cannot send a real `$JS.ACK` reply: the server drops such publishes.)
            let live = try #require(asked.last)
            try await client.publish(live, payload: Array("stray".utf8), reply: "not.an.ack")
            #expect(try await creates.await(atLeast: asked.count + 1).count == asked.count + 1)
            await consumer.stop()
            responder.cancel()
            await client.close()
        }
    }

    @Test func aRefusalIsReportedAtOnce() async throws {
        try await withNATSServer { server in
            let client = try await NATSClient.connect([server.url])
            let (responder, creates) = try await serveCreates(client) { _ in .refuse(code: 404, errCode: JetStreamAPIError.streamNotFound) }
            // A long timeout: the refusal must be what ends the start, never a slow answer.
            let js = JetStream(client: client, timeout: .seconds(20), apiPrefix: "TEST.API")
            let refused = await #expect(throws: JetStreamError.self) { try await js.orderedConsumer(stream: "S") }
            #expect(refused?.apiError?.errCode == JetStreamAPIError.streamNotFound)
            #expect(creates.all.count == 1)
            responder.cancel()
            await client.close()
        }
    }

    @Test func aClusterStillElectingIsAskedAgainButNotForEver() async throws {
        try await withNATSServer { server in
            let client = try await NATSClient.connect([server.url])
            let (responder, creates) = try await serveCreates(client) { $0 == 1 ? .refuse(code: 503, errCode: 10008) : .silence }
            let js = JetStream(client: client, timeout: .milliseconds(300), apiPrefix: "TEST.API")
            let failed = await #expect(throws: JetStreamError.self) { try await js.orderedConsumer(stream: "S") }
            #expect(failed?.natsError == .timeout())
            // The last request may reach the stand-in after its own timeout; then no more come.
            #expect(try await creates.await(atLeast: 3).count == 3)
            // Negative check: a window in which no further create may arrive.
            try await Task.sleep(for: .milliseconds(500))
            #expect(creates.all.count == 3)
            responder.cancel()
            await client.close()
        }
    }
}
