import KindlingCore
import KindlingServer
import KindlingTesting
import Logging
import Testing

/// The long-polling transport at `/.lp`, over sockets, as a browser's SDK uses it: a session is a
/// realtime connection like a WebSocket one, moves to a WebSocket without losing or reordering a
/// message, and is refused to pages the browser policy does not allow.
@Suite(.timeLimit(.minutes(2)))
struct LongPollTransportTests {
    static func withServer(
        corsOrigins: [String] = [], inFlightBudgetBytes: Int = 1 << 30, _ body: (KindlingServer) async throws -> Void
    ) async throws {
        try await KindlingTesting.withServer(
            { configuration in
                configuration.corsOrigins = corsOrigins
                configuration.inFlightBudgetBytes = inFlightBudgetBytes
            }, body)
    }

    /// `d` path value, for a data push.
    static func push(_ message: JSONValue) -> String? {
        guard message["t"]?.stringValue == "d", message["d"]?["a"]?.stringValue == "d", let path = message["d"]?["b"]?["p"]?.stringValue,
            let data = message["d"]?["b"]?["d"]
        else { return nil }
        return "\(path) \(JSONWriter.string(data))"
    }

    /// The status of the answer to request `number`.
    static func status(_ message: JSONValue, of number: Int) -> String? {
        guard message["d"]?["r"]?.numberValue == Double(number) else { return nil }
        return message["d"]?["b"]?["s"]?.stringValue
    }

    @Test func aLongPollingSessionIsARealtimeConnection() async throws {
        try await Self.withServer { server in
            let client = try await LongPollTestClient.start(port: server.port)
            #expect(client.handshake["d"]?["t"]?.stringValue == "h")
            #expect(client.handshake["d"]?["d"]?["v"]?.stringValue == "5")
            try await client.send(request: 1, "q", #"{"p":"/chat","h":""}"#)
            #expect(Self.push(try await client.nextMessage()) == "chat null")
            #expect(Self.status(try await client.nextMessage(), of: 1) == "ok")

            // Another client's write reaches it; its own write reaches another client.
            let watcher = try await TestClient.connect(port: server.port)
            _ = try await watcher.request("q", try JSONParser.parse(#"{"p":"/chat","h":""}"#))
            let put = try await TestHTTPConnection.request(port: server.port, "PUT", "/chat/a.json?ns=test", body: #""from REST""#)
            #expect(put.status == 200)
            #expect(Self.push(try await client.nextMessage()) == #"chat/a "from REST""#)
            #expect(Self.push(try await watcher.nextMessage()) == #"chat/a "from REST""#)
            // A message longer than one segment, sent in several requests at once.
            let long = String(repeating: "long-polling ", count: 600)
            try await client.send(request: 2, "p", #"{"p":"/chat/b","d":"\#(long)"}"#)
            #expect(Self.push(try await client.nextMessage()) == #"chat/b "\#(long)""#)
            #expect(Self.status(try await client.nextMessage(), of: 2) == "ok")
            #expect(Self.push(try await watcher.nextMessage()) == #"chat/b "\#(long)""#)
            // A keep-alive ping is answered.
            try await client.send(#"{"t":"c","d":{"t":"p","d":{}}}"#)
            #expect(try await client.nextMessage()["d"]?["t"]?.stringValue == "o")

            let metrics = try await TestHTTPConnection.request(port: server.port, "GET", "/.metrics")
            #expect(metrics.text.contains(#"kindling_connections_open{transport="longpoll"} 1"#))
            client.stop()
            await watcher.close()
        }
    }

    @Test func theSessionMovesToAWebSocketWithoutLosingOrReorderingAMessage() async throws {
        try await Self.withServer { server in
            let client = try await LongPollTestClient.start(port: server.port)
            try await client.send(request: 1, "q", #"{"p":"/order","h":""}"#)
            #expect(Self.push(try await client.nextMessage()) == "order null")
            #expect(Self.status(try await client.nextMessage(), of: 1) == "ok")

            // The WebSocket names the session; the server answers `a`, then pongs its pings.
            let socket = try await TestClient.connect(port: server.port, transportSession: client.session)
            #expect(socket.handshake["d"]?["t"]?.stringValue == "a")
            // A second WebSocket naming the same session is closed, and its going changes nothing.
            let intruder = try await RawConnection.connect(port: server.port)
            try await intruder.send(
                "GET /.ws?v=5&ns=test&s=\(client.session) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                    + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
            #expect(await intruder.waitFor("cannot move to a WebSocket now"))
            #expect(await intruder.waitForClose())
            try await socket.send(#"{"t":"c","d":{"t":"p","d":{}}}"#)
            #expect(try await socket.nextMessage()["d"]?["t"]?.stringValue == "o")
            // Until the switch, the server's messages still come over long-polling.
            _ = try await TestHTTPConnection.request(port: server.port, "PUT", "/order/before.json?ns=test", body: "1")
            #expect(Self.push(try await client.nextMessage()) == "order/before 1")

            // The client's `a` on the WebSocket: `n` is the server's last long-polling message.
            try await socket.send(#"{"t":"c","d":{"t":"a","d":{}}}"#)
            #expect(try await client.nextMessage()["d"]?["t"]?.stringValue == "n")
            // A request on the WebSocket now waits for the client's `n` over long-polling, behind
            // the request sent there before it.
            try await socket.send(#"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/order/x","d":"second"}}}"#)
            try await client.send(request: 2, "p", #"{"p":"/order/x","d":"first"}"#)
            try await client.send(#"{"t":"c","d":{"t":"n","d":{}}}"#)
            // Both answers and every push come over the WebSocket, in order.
            var seen: [String] = []
            while seen.count < 4 {
                let message = try await socket.nextMessage()
                if let push = Self.push(message) { seen.append(push) }
                if let status = Self.status(message, of: 2) { seen.append("r2 \(status)") }
                if let status = Self.status(message, of: 3) { seen.append("r3 \(status)") }
            }
            #expect(seen == [#"order/x "first""#, "r2 ok", #"order/x "second""#, "r3 ok"])
            #expect(await client.waitForClose())
            let value = try await TestHTTPConnection.request(port: server.port, "GET", "/order/x.json?ns=test")
            #expect(value.text == #""second""#)
            // Later changes reach the session on its WebSocket.
            _ = try await TestHTTPConnection.request(port: server.port, "PUT", "/order/after.json?ns=test", body: "2")
            #expect(Self.push(try await socket.nextMessage()) == "order/after 2")
            await socket.close()
        }
    }

    @Test func aPageThatLeavesHasItsOnDisconnectWritesMade() async throws {
        try await Self.withServer { server in
            let watcher = try await TestClient.connect(port: server.port)
            _ = try await watcher.request("q", try JSONParser.parse(#"{"p":"/presence","h":""}"#))
            let client = try await LongPollTestClient.start(port: server.port)
            try await client.send(request: 1, "o", #"{"p":"/presence/ada","d":"offline"}"#)
            #expect(Self.status(try await client.nextMessage(), of: 1) == "ok")
            try await client.send(request: 2, "p", #"{"p":"/presence/ada","d":"online"}"#)
            #expect(Self.push(try await watcher.nextMessage()) == #"presence/ada "online""#)
            // The page's disconnect frame stays open until it unloads.
            let frame = try await TestHTTPConnection.connect(port: server.port)
            try await frame.send("GET", "/.lp?dframe=t&id=\(client.session)&pw=\(client.password)&ns=test", headers: client.headers)
            #expect(try await frame.responseHead().status == 200)
            client.stop()
            frame.close()
            #expect(Self.push(try await watcher.nextMessage()) == #"presence/ada "offline""#)
            await watcher.close()
        }
    }

    @Test func pagesTheBrowserPolicyRefusesOpenNoSession() async throws {
        try await Self.withServer { server in
            let refused: [[(String, String)]] = [
                [("Referer", "http://evil.example/app.html")],
                [("Sec-Fetch-Site", "cross-site")],
                [],
            ]
            for headers in refused {
                let response = try await LongPollTestClient.startResponse(port: server.port, headers: headers)
                #expect(response.status == 403, "\(headers)")
                #expect(!response.text.contains("pLPCommand"))
            }
            let loopbackPage = try await LongPollTestClient.startResponse(port: server.port, headers: [("Referer", "http://localhost:5173/")])
            #expect(loopbackPage.status == 200)
            #expect(loopbackPage.header("content-type") == "application/javascript; charset=utf-8")
        }
        try await Self.withServer(corsOrigins: ["http://app.example"]) { server in
            let allowed = try await LongPollTestClient.startResponse(port: server.port, headers: [("Referer", "http://app.example/index.html")])
            #expect(allowed.status == 200)
            let other = try await LongPollTestClient.startResponse(port: server.port, headers: [("Referer", "http://evil.example/")])
            #expect(other.status == 403)
        }
    }

    @Test func aFloodOfStartsIsRefusedPastTheConnectionLimit() async throws {
        var logger = Logger(label: "kindling-test")
        logger.logLevel = .critical
        try await KindlingServer.run(ServerConfiguration(port: 0, maxConnections: 8, logger: logger)) { server in
            // Sessions never polled: each holds no connection, but counts as one.
            for _ in 0..<8 {
                #expect(try await LongPollTestClient.startResponse(port: server.port).status == 200)
            }
            let refused = try await LongPollTestClient.startResponse(port: server.port)
            #expect(refused.status == 503)
            #expect(refused.header("retry-after") == "1")
            #expect(!refused.text.contains("pLPCommand"))
        }
    }

    @Test func partlyReceivedMessagesCountAgainstTheServerWideBudget() async throws {
        try await Self.withServer(inFlightBudgetBytes: 4_096) { server in
            let client = try await LongPollTestClient.start(port: server.port)
            // The later segments of a message whose first never comes: held, within the budget.
            let piece = String(repeating: "A", count: 1_800)
            let first = try await TestHTTPConnection.request(
                port: server.port, "GET", "/.lp?id=\(client.session)&pw=\(client.password)&ser=1&seg0=1&ts0=4&d0=\(piece)", headers: client.headers)
            #expect(first.status == 200)
            #expect(!first.text.contains("close"))
            // Past the budget the session ends; a well-behaved one beside it is untouched.
            let other = try await LongPollTestClient.start(port: server.port)
            let second = try await TestHTTPConnection.request(
                port: server.port, "GET",
                "/.lp?id=\(client.session)&pw=\(client.password)&ser=2&seg0=2&ts0=4&d0=\(piece)&seg1=3&ts1=4&d1=\(piece)", headers: client.headers)
            #expect(second.text.contains(#"pLPCommand5("close")"#))
            #expect(await client.waitForClose())
            try await other.send(request: 1, "p", #"{"p":"/fine","d":true}"#)
            #expect(Self.status(try await other.nextMessage(), of: 1) == "ok")
            other.stop()
        }
    }

    @Test func unknownSessionsWrongPasswordsAndBadRequestsAreRefused() async throws {
        try await Self.withServer { server in
            let client = try await LongPollTestClient.start(port: server.port)
            let headers = client.headers
            let wrong = try await TestHTTPConnection.request(port: server.port, "GET", "/.lp?id=\(client.session)&pw=0000&ser=1", headers: headers)
            #expect(wrong.status == 404)
            let unknown = try await TestHTTPConnection.request(port: server.port, "GET", "/.lp?id=1-1&pw=\(client.password)&ser=1", headers: headers)
            #expect(unknown.status == 404)
            let malformed = try await TestHTTPConnection.request(
                port: server.port, "GET", "/.lp?id=\(client.session)&pw=\(client.password)&ser=1&seg0=-4&ts0=1&d0=e30.", headers: headers)
            #expect(malformed.status == 400)
            let noCallback = try await TestHTTPConnection.request(port: server.port, "GET", "/.lp?start=t&ns=test", headers: headers)
            #expect(noCallback.status == 400)
            let badNamespace = try await TestHTTPConnection.request(port: server.port, "GET", "/.lp?start=t&cb=1&ns=a.b", headers: headers)
            #expect(badNamespace.status == 400)
            // A WebSocket naming no open session is not upgraded.
            let upgrade = try await TestHTTPConnection.request(
                port: server.port, "GET", "/.ws?v=5&ns=test&s=1-1",
                headers: [
                    ("Connection", "Upgrade"), ("Upgrade", "websocket"), ("Sec-WebSocket-Version", "13"),
                    ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
                ])
            #expect(upgrade.status == 400)
            // A segment far out of range ends the session: the poll is told to close.
            let far = try await TestHTTPConnection.request(
                port: server.port, "GET", "/.lp?id=\(client.session)&pw=\(client.password)&ser=1&seg0=99999999&ts0=1&d0=e30.", headers: headers)
            #expect(far.text.contains(#"pLPCommand5("close")"#))
            #expect(await client.waitForClose())
        }
    }
}
