import KindlingCore
import KindlingServer
import KindlingTesting
import Logging
import Testing

/// The realtime protocol over real sockets: a server on a free port and test clients speaking
/// the wire as the SDKs do.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct RealtimeProtocolTests {
    static func withServer(
        maxPendingBytes: Int = 64 * 1024 * 1024,
        idleTimeout: Duration = .seconds(120),
        _ body: (KindlingServer) async throws -> Void
    ) async throws {
        try await KindlingTesting.withServer(
            { configuration in
                configuration.maxPendingOutboundBytes = maxPendingBytes
                configuration.idleTimeout = idleTimeout
            }, body)
    }

    func json(_ text: String) throws -> JSONValue { try JSONParser.parse(text) }

    /// The action of a push, or "r<N>:<status>" for a response.
    func describe(_ message: JSONValue) -> String { Self.describe(message) }

    /// `describe`, for other suites that replay these exchanges (the cluster's).
    static func describe(_ message: JSONValue) -> String {
        if let number = message["d"]?["r"]?.numberValue {
            return "r\(Int(number)):\(message["d"]?["b"]?["s"]?.stringValue ?? "?")"
        }
        let body = message["d"]?["b"]
        let tag = body?["t"]?.numberValue.map { "[\(Int($0))]" } ?? ""
        return
            "\(message["d"]?["a"]?.stringValue ?? "?")\(tag) \(body?["p"]?.stringValue ?? "") \(body.flatMap { $0["d"] }.map(JSONWriter.string) ?? "")"
    }

    @Test func handshakeComesFirstWithAReachableHost() async throws {
        try await Self.withServer { server in
            let client = try await TestClient.connect(port: server.port)
            let hello = client.handshake["d"]?["d"]
            #expect(client.handshake["t"]?.stringValue == "c")
            #expect(client.handshake["d"]?["t"]?.stringValue == "h")
            #expect(hello?["v"] == .string("5"))
            #expect(hello?["h"] == .string("127.0.0.1:\(server.port)"))
            #expect(hello?["s"]?.stringValue?.isEmpty == false)
            #expect((hello?["ts"]?.numberValue ?? 0) > 1_700_000_000_000)
            await client.close()
        }
    }

    @Test func pingPongAndKeepalive() async throws {
        try await Self.withServer { server in
            let client = try await TestClient.connect(port: server.port)
            try await client.sendFrame(#"{"t":"c","d":{"t":"p","d":{}}}"#)
            #expect(try await client.nextRawMessage() == #"{"t":"c","d":{"t":"o","d":{}}}"#)
            try await client.sendFrame("0")
            let replies = try await client.request("s", try json(#"{"c":{"sdk.js.12-0-0":1}}"#))
            #expect(replies.map(describe) == ["r1:ok"])
            await client.close()
        }
    }

    @Test func listenDataComesBeforeOkAndWritesReachEveryListenerBeforeTheWritersOk() async throws {
        try await Self.withServer { server in
            let writer = try await TestClient.connect(port: server.port)
            let other = try await TestClient.connect(port: server.port)
            #expect(try await writer.request("p", try json(#"{"p":"/rooms/a","d":{"n":1}}"#)).map(describe) == ["r1:ok"])
            #expect(try await writer.request("q", try json(#"{"p":"/rooms","h":""}"#)).map(describe) == [#"d rooms {"a":{"n":1}}"#, "r2:ok"])
            #expect(try await other.request("q", try json(#"{"p":"/rooms/a/n","h":""}"#)).map(describe) == ["d rooms/a/n 1", "r1:ok"])
            let written = try await writer.request("p", try json(#"{"p":"/rooms/a/n","d":2}"#))
            #expect(written.map(describe) == ["d rooms/a/n 2", "r3:ok"])
            #expect(describe(try await other.nextMessage()) == "d rooms/a/n 2")
            let merged = try await writer.request("m", try json(#"{"p":"/rooms","d":{"a/n":3,"b":true}}"#))
            #expect(merged.map(describe) == [#"m rooms {"a/n":3,"b":true}"#, "r4:ok"])
            #expect(describe(try await other.nextMessage()) == "d rooms/a/n 3")
            await writer.close()
            await other.close()
        }
    }

    @Test func aListenWhoseHashMatchesGetsNoData() async throws {
        try await Self.withServer { server in
            let client = try await TestClient.connect(port: server.port)
            _ = try await client.request("p", try json(#"{"p":"/count","d":10}"#))
            let replies = try await client.request("q", try json(#"{"p":"/count","h":"+r5aI9HvKKagELki8SYKBk0q7D4="}"#))
            #expect(replies.map(describe) == ["r2:ok"])
            await client.close()
        }
    }

    @Test func transactionsAreCompareAndSet() async throws {
        try await Self.withServer { server in
            let client = try await TestClient.connect(port: server.port)
            _ = try await client.request("p", try json(#"{"p":"/count","d":10}"#))
            let stale = try await client.request("p", try json(#"{"p":"/count","d":11,"h":"w28swksk9+tXf5jEdS9R5oSFAv8="}"#))
            #expect(stale.map(describe) == ["r2:datastale"])
            #expect(try await client.request("g", try json(#"{"p":"/count","q":{}}"#)).last?["d"]?["b"]?["d"] == .number(10))
            let empty = try await client.request("p", try json(#"{"p":"/count","d":11,"h":""}"#))
            #expect(empty.map(describe) == ["r4:datastale"])
            let ok = try await client.request("p", try json(#"{"p":"/count","d":11,"h":"+r5aI9HvKKagELki8SYKBk0q7D4="}"#))
            #expect(ok.map(describe) == ["r5:ok"])
            let create = try await client.request("p", try json(#"{"p":"/fresh","d":1,"h":""}"#))
            #expect(create.map(describe) == ["r6:ok"])
            await client.close()
        }
    }

    @Test func largeValuesAreSplitBothWays() async throws {
        try await Self.withServer { server in
            let writer = try await TestClient.connect(port: server.port)
            let reader = try await TestClient.connect(port: server.port)
            _ = try await reader.request("q", try json(#"{"p":"/big","h":""}"#))
            let text = String(repeating: "✓abc", count: 25_000)
            let body = JSONValue.object([JSONMember("p", .string("/big")), JSONMember("d", .object([JSONMember("text", .string(text))]))])
            #expect(try await writer.request("p", body).last.map(describe) == "r1:ok")
            _ = try await reader.nextMessage()
            let frames = reader.receivedFrames()
            #expect(frames.contains { Int($0) != nil }, "expected a frame count among \(frames.suffix(3))")
            #expect(frames.allSatisfy { $0.utf16.count <= 16_384 })
        }
    }

    @Test func largeValuesArriveWhole() async throws {
        try await Self.withServer { server in
            let writer = try await TestClient.connect(port: server.port)
            let reader = try await TestClient.connect(port: server.port)
            _ = try await reader.request("q", try json(#"{"p":"/big","h":""}"#))
            let text = String(repeating: "✓abc", count: 25_000)
            let body = JSONValue.object([JSONMember("p", .string("/big")), JSONMember("d", .object([JSONMember("text", .string(text))]))])
            _ = try await writer.request("p", body)
            let push = try await reader.nextMessage()
            #expect(push["d"]?["b"]?["d"]?["text"] == .string(text))
            let read = try await reader.request("g", try json(#"{"p":"/big/text","q":{}}"#))
            #expect(read.last?["d"]?["b"]?["d"] == .string(text))
        }
    }

    @Test func taggedQueriesGetFilteredWindowsThatMove() async throws {
        try await Self.withServer { server in try await Self.taggedQueriesGetFilteredWindows(port: server.port) }
    }

    /// A tagged query listen gets its window, the window moves with a write, and after an
    /// unlisten nothing more comes; a fresh connection to `port`, in `namespace`.
    static func taggedQueriesGetFilteredWindows(port: Int, namespace: String = "test") async throws {
        func json(_ text: String) throws -> JSONValue { try JSONParser.parse(text) }
        let client = try await TestClient.connect(port: port, namespace: namespace)
        _ = try await client.request("p", try json(#"{"p":"/s","d":{"a":{"score":1},"b":{"score":2},"c":{"score":3}}}"#))
        let listen = try await client.request("q", try json(#"{"p":"/s","q":{"l":2,"vf":"r","i":"score"},"t":1,"h":""}"#))
        #expect(listen.map(describe) == [#"d[1] s {"b":{"score":2},"c":{"score":3}}"#, "r2:ok"])
        let moved = try await client.request("p", try json(#"{"p":"/s/b/score","d":0}"#))
        #expect(moved.map(describe) == [#"d[1] s {"a":{"score":1},"c":{"score":3}}"#, "r3:ok"])
        let got = try await client.request("g", try json(#"{"p":"/s","q":{"l":1,"vf":"l","i":"score"}}"#))
        #expect(got.last?["d"]?["b"]?["d"] == (try json(#"{"b":{"score":0}}"#)))
        _ = try await client.request("n", try json(#"{"p":"/s","q":{"l":2,"vf":"r","i":"score"},"t":1}"#))
        let after = try await client.request("p", try json(#"{"p":"/s/z","d":{"score":9}}"#)).map(describe)
        #expect(after == ["r6:ok"])
        await client.close()
    }

    @Test func onDisconnectRunsWhenAClientDropsAbruptly() async throws {
        try await Self.withServer { server in
            let watcher = try await TestClient.connect(port: server.port)
            _ = try await watcher.request("q", try json(#"{"p":"/presence","h":""}"#))
            let leaver = try await TestClient.connect(port: server.port)
            _ = try await leaver.request("p", try json(#"{"p":"/presence/ada","d":true}"#))
            #expect(describe(try await watcher.nextMessage()) == "d presence/ada true")
            _ = try await leaver.request("o", try json(#"{"p":"/presence/ada","d":null}"#))
            _ = try await leaver.request("om", try json(#"{"p":"/presence","d":{"lastSeen":{".sv":"timestamp"}}}"#))
            _ = try await leaver.request("o", try json(#"{"p":"/presence/cancelled","d":1}"#))
            _ = try await leaver.request("oc", try json(#"{"p":"/presence/cancelled"}"#))
            await leaver.abort()
            #expect(describe(try await watcher.nextMessage()) == "d presence/ada null")
            let merge = try await watcher.nextMessage()
            #expect(merge["d"]?["a"]?.stringValue == "m")
            #expect((merge["d"]?["b"]?["d"]?["lastSeen"]?.numberValue ?? 0) > 1_700_000_000_000)
            #expect(await watcher.isQuiet())
            await watcher.close()
        }
    }

    @Test func namespacesAreIsolated() async throws {
        try await Self.withServer { server in
            let one = try await TestClient.connect(port: server.port, namespace: "one")
            let two = try await TestClient.connect(port: server.port, namespace: "two")
            let byHost = try await TestClient.connect(port: server.port, namespace: nil, hostHeader: "three.localhost:\(server.port)")
            _ = try await one.request("p", try json(#"{"p":"/x","d":1}"#))
            #expect(try await two.request("g", try json(#"{"p":"/x","q":{}}"#)).last?["d"]?["b"]?["d"] == .null)
            #expect(try await one.request("g", try json(#"{"p":"/x","q":{}}"#)).last?["d"]?["b"]?["d"] == .number(1))
            _ = try await byHost.request("p", try json(#"{"p":"/y","d":2}"#))
            #expect(server.namespaces.contains("three"))
            #expect(server.namespaces.contains("one") && server.namespaces.contains("two"))
        }
    }

    @Test func badRequestsGetErrorsAndTheConnectionGoesOn() async throws {
        try await Self.withServer { server in
            let client = try await TestClient.connect(port: server.port)
            _ = try await client.request("p", try json(#"{"p":"/keep","d":1}"#))
            #expect(try await client.request("p", try json(#"{"p":"/a.b","d":1}"#)).map(describe) == ["r2:invalid_path"])
            #expect(try await client.request("p", try json(#"{"p":"/a","d":{"b$":1}}"#)).map(describe) == ["r3:invalid_path"])
            #expect(try await client.request("m", try json(#"{"p":"/a","d":{"x":1,"x/y":2}}"#)).map(describe) == ["r4:invalid_data"])
            #expect(try await client.request("q", try json(#"{"p":"/a","q":{"l":-1},"t":1,"h":""}"#)).map(describe) == ["r5:invalid_query"])
            #expect(try await client.request("zz", try json("{}")).map(describe) == ["r6:unknown_action"])
            #expect(try await client.request("p", try json(#"{"p":"/a","d":{".sv":"bogus"}}"#)).map(describe) == ["r7:invalid_data"])
            #expect(try await client.request("g", try json(#"{"p":"/keep","q":{}}"#)).last?["d"]?["b"]?["d"] == .number(1))
            await client.close()
        }
    }

    /// A write over the message limit, split as the SDKs split it, fails with `too_big` and the
    /// connection goes on: closed instead, an SDK would reconnect and send the write again, for
    /// ever.
    @Test func aWriteOverTheMessageLimitIsRefusedAndTheConnectionGoesOn() async throws {
        var logger = Logger(label: "kindling-test")
        logger.logLevel = .critical
        try await KindlingServer.run(ServerConfiguration(port: 0, maxMessageBytes: 100_000, logger: logger)) { server in
            let client = try await TestClient.connect(port: server.port)
            _ = try await client.request("p", try json(#"{"p":"/keep","d":1}"#))
            let big = JSONValue.object([JSONMember("p", .string("/big")), JSONMember("d", .string(String(repeating: "x", count: 150_000)))])
            #expect(try await client.request("p", big).map(describe) == ["r2:too_big"])
            #expect(try await client.request("p", try json(#"{"p":"/after","d":2}"#)).map(describe) == ["r3:ok"])
            #expect(try await client.request("g", try json(#"{"p":"/big","q":{}}"#)).last?["d"]?["b"]?["d"] == .null)
            await client.close()
        }
    }

    /// Each new order of a query listen builds an index of the location: past the cap of orders
    /// per location the listen is served as Firebase serves a query without an index (the whole
    /// location untagged, and an `ok` carrying the `no_index` warning); orders already kept,
    /// and other locations, are still served filtered.
    @Test func queryListensPastTheOrdersOfOneLocationAreServedUnindexed() async throws {
        try await Self.withServer { server in
            let client = try await TestClient.connect(port: server.port)
            _ = try await client.request("p", try json(#"{"p":"/items","d":{"a":{"k0":1},"b":{"k0":2}}}"#))
            let cap = IndexStore.maxQueryIndexesPerLocation
            for order in 0..<cap {
                let reply = try await client.request("q", try json(#"{"p":"/items","q":{"i":"k\#(order)","l":1},"t":\#(order + 1),"h":""}"#))
                #expect(reply.last.map(describe) == "r\(order + 2):ok")
            }
            let unindexed = try await client.request("q", try json(#"{"p":"/items","q":{"i":"more","l":1},"t":99,"h":""}"#))
            #expect(unindexed.map(describe) == [#"d items {"a":{"k0":1},"b":{"k0":2}}"#, "r\(cap + 2):ok"])
            #expect(unindexed.last?["d"]?["b"]?["d"] == (try json(#"{"w":["no_index"]}"#)))
            // Later changes there come untagged too; after the unlisten, none.
            let change = try await client.request("p", try json(#"{"p":"/items/c","d":{"k0":5,"more":3}}"#)).map(describe)
            #expect(change.filter { $0.hasPrefix("d ") } == [#"d items/c {"k0":5,"more":3}"#])
            #expect(change.last == "r\(cap + 3):ok")
            _ = try await client.request("n", try json(#"{"p":"/items","q":{"i":"more","l":1}}"#))
            for order in 0..<cap { _ = try await client.request("n", try json(#"{"p":"/items","q":{"i":"k\#(order)","l":1}}"#)) }
            #expect(try await client.request("p", try json(#"{"p":"/items/d","d":{"more":4}}"#)).map(describe) == ["r\(cap + cap + 5):ok"])
            let elsewhere = try await client.request("q", try json(#"{"p":"/other","q":{"i":"more","l":1},"t":101,"h":""}"#))
            #expect(elsewhere.last.map(describe) == "r\(cap + cap + 6):ok")
            #expect(elsewhere.last?["d"]?["b"]?["d"] != (try json(#"{"w":["no_index"]}"#)))
            await client.close()
        }
    }

    @Test func malformedMessagesCloseOnlyThatConnection() async throws {
        try await Self.withServer { server in
            let bad = try await TestClient.connect(port: server.port)
            let good = try await TestClient.connect(port: server.port)
            _ = try await bad.request("p", try json(#"{"p":"/stays","d":"yes"}"#))
            try await bad.sendFrame("{this is not json")
            #expect(await bad.waitForClose())
            #expect(try await good.request("g", try json(#"{"p":"/stays","q":{}}"#)).last?["d"]?["b"]?["d"] == .string("yes"))
            await good.close()
        }
    }

    @Test func messagesFragmentedIntoWebSocketFramesAreReassembled() async throws {
        try await Self.withServer { server in
            let client = try await TestClient.connect(port: server.port)
            try await client.sendFragmented(#"{"t":"d","d":{"r":100,"a":"p","b":{"p":"/frag","d":"in three pieces"}}}"#, pieces: 3)
            #expect(describe(try await client.nextMessage()) == "r100:ok")
            #expect(try await client.request("g", try json(#"{"p":"/frag","q":{}}"#)).last?["d"]?["b"]?["d"] == .string("in three pieces"))
            // A continuation with no message under way is a protocol error: the connection closes.
            try await client.sendContinuation("stray")
            #expect(await client.waitForClose())
        }
    }

    @Test func authAcceptsOwnerAndEmulatorTokens() async throws {
        try await Self.withServer { server in
            let client = try await TestClient.connect(port: server.port)
            #expect(try await client.request("gauth", try json(#"{"cred":"owner"}"#)).map(describe) == ["r1:ok"])
            // An unsigned emulator token: {"alg":"none","type":"JWT"}.{"sub":"alice","iat":0}.
            let token = "eyJhbGciOiJub25lIiwidHlwZSI6IkpXVCJ9.eyJzdWIiOiJhbGljZSIsImlhdCI6MH0."
            let reply = try await client.request("auth", .object([JSONMember("cred", .string(token))]))
            #expect(reply.map(describe) == ["r2:ok"])
            #expect(reply.last?["d"]?["b"]?["d"]?["auth"]?["uid"] == .string("alice"))
            #expect(try await client.request("auth", try json(#"{"cred":"not a token"}"#)).map(describe) == ["r3:invalid_token"])
            #expect(try await client.request("unauth", try json("{}")).map(describe) == ["r4:ok"])
            await client.close()
        }
    }

    @Test func silentConnectionsAreClosedAndTheirOnDisconnectRuns() async throws {
        try await Self.withServer(idleTimeout: .seconds(1)) { server in
            let silent = try await TestClient.connect(port: server.port)
            _ = try await silent.request("o", try json(#"{"p":"/gone","d":true}"#))
            // The client sends nothing more: the server must take it for dead.
            #expect(await silent.waitForClose(timeout: .seconds(20)))
            let reader = try await TestClient.connect(port: server.port)
            var seen: JSONValue = .null
            // Generous: the whole suite runs in parallel on two cores in CI.
            try await eventually(within: .seconds(20), every: .milliseconds(100)) {
                seen = try await reader.request("g", try json(#"{"p":"/gone","q":{}}"#)).last?["d"]?["b"]?["d"] ?? .null
                return seen != .null
            }
            #expect(seen == .bool(true))
            await reader.close()
        }
    }

    @Test func aReaderThatFallsBehindIsDisconnected() async throws {
        try await Self.withServer(maxPendingBytes: 4096) { server in
            let writer = try await TestClient.connect(port: server.port)
            // A small receive buffer, so the backlog builds up in the server rather than the kernel.
            let slow = try await TestClient.connect(port: server.port, receiveBufferBytes: 16 * 1024)
            _ = try await slow.request("q", try json(#"{"p":"/flood","h":""}"#))
            slow.pauseReading()
            var text = ""
            for round in 0..<40 {
                // A different value each time: an unchanged value would send nothing.
                text = String(repeating: "x", count: 200_000) + String(round)
                _ = try await writer.request("p", .object([JSONMember("p", .string("/flood")), JSONMember("d", .string(text))]))
            }
            slow.resumeReading()
            #expect(await slow.waitForClose())
            #expect(try await writer.request("g", try json(#"{"p":"/flood","q":{}}"#)).last?["d"]?["b"]?["d"] == .string(text))
        }
    }
}
