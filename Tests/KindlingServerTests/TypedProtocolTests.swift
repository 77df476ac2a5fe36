import KindlingCore
import KindlingProtocol
import KindlingServer
import KindlingTesting
import Testing

/// The test client speaking through KindlingProtocol: typed requests as the SDK encodes them,
/// decoded by the server, and the server's answers decoded as the SDK reads them.
@Suite(.timeLimit(.minutes(1)))
struct TypedProtocolTests {
    @Test func typedRequestsAndTheirAnswersRoundTripThroughTheServer() async throws {
        try await RealtimeProtocolTests.withServer { server in
            let writer = try await TestClient.connect(port: server.port)
            let reader = try await TestClient.connect(port: server.port)
            // The handshake, which connect read, decodes as the SDK reads it.
            guard case .handshake(let hello) = try ServerEnvelope.decode(reader.handshake.description) else {
                Issue.record("not a handshake: \(reader.handshake)")
                return
            }
            #expect(hello.version == "5")
            let path = Path(keys: ["rooms", "a"])
            _ = try await reader.request(.listen(ListenRequest(path: path, query: .all, tag: nil, hash: "")))
            let answers = try await writer.request(.put(path: path, data: ["free": 2, "name": "Library"], hash: nil))
            #expect(answers.last?["d"]?["b"]?["s"] == "ok")
            var pushed: ServerEnvelope?
            for _ in 0..<5 {
                let envelope = try await reader.nextEnvelope()
                if case .push = envelope {
                    pushed = envelope
                    break
                }
            }
            #expect(pushed == .push(.overwrite(path: path, data: ["free": 2, "name": "Library"], tag: nil)))
        }
    }
}
