import KindlingCore
import KindlingServer
import KindlingTesting
import Testing

extension RealtimeProtocolTests {
    /// An SDK that reconnects names its last session (`ls`). When the network left that
    /// connection half-open, the server closes it at once and makes its onDisconnect writes
    /// before anything the new connection asks, so the presence pattern (onDisconnect "offline",
    /// then set "online") ends "online", not "offline" when the old socket times out later.
    @Test func aClientBackAsANewSessionHasItsOldConnectionClosedFirst() async throws {
        try await Self.withServer { server in
            let watcher = try await TestClient.connect(port: server.port)
            _ = try await watcher.request("q", try json(#"{"p":"/presence","h":""}"#))
            let old = try await TestClient.connect(port: server.port)
            let session = try #require(old.handshake["d"]?["d"]?["s"]?.stringValue)
            _ = try await old.request("o", try json(#"{"p":"/presence/ada","d":"offline"}"#))
            _ = try await old.request("p", try json(#"{"p":"/presence/ada","d":"online"}"#))
            #expect(describe(try await watcher.nextMessage()) == #"d presence/ada "online""#)

            // Nothing reaches the old socket's client any more, and the server has not noticed.
            let back = try await TestClient.connect(port: server.port, lastSession: session)
            _ = try await back.request("o", try json(#"{"p":"/presence/ada","d":"offline"}"#))
            _ = try await back.request("p", try json(#"{"p":"/presence/ada","d":"online"}"#))
            #expect(describe(try await watcher.nextMessage()) == #"d presence/ada "offline""#)
            #expect(describe(try await watcher.nextMessage()) == #"d presence/ada "online""#)
            #expect(await old.waitForClose(timeout: .seconds(5)))
            #expect(await watcher.isQuiet())
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/presence/ada.json?ns=test").text == #""online""#)

            // A session id whose random part is wrong, or that is not one, closes nothing.
            let backSession = try #require(back.handshake["d"]?["d"]?["s"]?.stringValue)
            let number = try #require(backSession.split(separator: "-").first)
            for guess in ["\(number)-1", "\(number)", "\(number)-", "-\(number)", "\(number)-99999999999999999999999", "x"] {
                let guesser = try await TestClient.connect(port: server.port, lastSession: guess)
                _ = try await guesser.request("p", try json(#"{"p":"/probe","d":1}"#))
                await guesser.close()
            }
            #expect(await !back.waitForClose(timeout: .milliseconds(300)))
            _ = try await back.request("p", try json(#"{"p":"/presence/ada","d":"still online"}"#))
            #expect(describe(try await watcher.nextMessage()) == #"d presence/ada "still online""#)
            await back.close()
            #expect(describe(try await watcher.nextMessage()) == #"d presence/ada "offline""#)
            await watcher.close()
        }
    }
}
