import KindlingCore
import KindlingProtocol
import KindlingServer
import KindlingTesting
import Testing

/// The answers a namespace makes to reads are held against the server-wide budget of requests
/// in progress (`--max-unfinished-mb`) until their event loops have taken them: reads of a
/// large location that would together take more are not answered, and their connections are
/// closed to read again later.
extension BackpressureTests {
    /// 1.5 MB of data at `/data` in namespace `t`.
    static func writeLargeData(port: Int) async throws {
        let chunk = "\"" + String(repeating: "d", count: 500_000) + "\""
        for index in 0..<3 {
            #expect(try await TestHTTPConnection.request(port: port, "PUT", "/data/c\(index).json?ns=t", body: chunk).status == 200)
        }
    }

    static func get(_ number: Int, _ path: String) -> [UInt8] {
        let body = JSONValue.object([JSONMember("p", .string(path)), JSONMember("q", .object([]))])
        return RawConnection.frame(opcode: 1, Array(ClientMessage.request(number: number, action: "g", body: body).utf8))
    }

    /// Four reads of 1.5 MB in one read of the socket: each answer is held twice over (its
    /// bytes and its frames), so the third passes 8 MiB and the connection is closed with the
    /// reason; the budget is then free again for a reader that asks once.
    @Test func answersToReadsAreHeldAgainstTheBudgetOfRequestsInProgress() async throws {
        try await HardeningServer.with({ $0.inFlightBudgetBytes = 8 * 1024 * 1024 }) { server, logs in
            try await Self.writeLargeData(port: server.port)
            let greedy = try await RawConnection.connect(port: server.port)
            defer { greedy.close() }
            try await greedy.upgradeToWebSocket(namespace: "t")
            try await greedy.send((1...4).flatMap { Self.get($0, "/data") })
            #expect(await greedy.waitForClose(timeout: .seconds(10)))
            #expect(greedy.receivedText.contains("too many answers in progress"))
            #expect(!greedy.receivedText.contains("dddddddddd"), "no answer of the closed connection's went out")
            #expect(logs.contains("too many answers in progress"))
            let reader = try await TestClient.connect(port: server.port, namespace: "t")
            defer { Task { await reader.close() } }
            for _ in 0..<3 {
                let answer = try await reader.request("g", .object([JSONMember("p", .string("/data")), JSONMember("q", .object([]))]))
                #expect(Self.status(answer) == "ok")
                #expect(answer.last?["d"]?["b"]?["d"]?["c2"]?.stringValue?.utf8.count == 500_000)
            }
        }
    }

    /// An answer larger than the whole budget can hold goes out unheld, as before: refused, it
    /// would be asked for again at every reconnection.
    @Test func anAnswerTheBudgetCouldNeverHoldIsStillSent() async throws {
        try await HardeningServer.with({ $0.inFlightBudgetBytes = 2 * 1024 * 1024 }) { server, _ in
            try await Self.writeLargeData(port: server.port)
            let reader = try await TestClient.connect(port: server.port, namespace: "t")
            defer { Task { await reader.close() } }
            let answer = try await reader.request("g", .object([JSONMember("p", .string("/data")), JSONMember("q", .object([]))]))
            #expect(Self.status(answer) == "ok")
            #expect(answer.last?["d"]?["b"]?["d"]?["c0"]?.stringValue?.utf8.count == 500_000)
        }
    }
}

extension BackpressureTests {
    /// Writes three 2 MB strings of `letter` under `/data` (6 MB in all) over REST.
    static func putThreeChunks(of letter: Character, port: Int) async throws {
        let chunk = "\"" + String(repeating: letter, count: 2_000_000) + "\""
        for index in 0..<3 {
            #expect(try await TestHTTPConnection.request(port: port, "PUT", "/data/c\(index).json?ns=t&print=silent", body: chunk).status == 204)
        }
    }

    /// Connections that send `request` and read nothing until resumed. Each of the first `held`
    /// is waited for until its answer holds `bytesEach` more of the budget
    /// (`kindling_unfinished_bytes`): the server has rendered it and the socket cannot take it.
    static func unreadRequests(_ count: Int, _ request: String, port: Int, held: Int, bytesEach: Double) async throws -> [RawConnection] {
        var readers: [RawConnection] = []
        for index in 0..<count {
            let reader = try await RawConnection.connect(port: port, receiveBufferBytes: 4096)
            reader.pauseReading()
            try await reader.send(request)
            readers.append(reader)
            if index < held {
                let holding = bytesEach * Double(index + 1)
                #expect(try await eventually(within: .seconds(20)) { try await PrometheusText.unfinishedBytes(port: port) >= holding })
            }
        }
        return readers
    }

    static let restRead = "GET /data.json?ns=t HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    static let streamRead = "GET /data.json?ns=t HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"

    /// A REST read's rendered answer is held against the budget of requests in progress until
    /// the socket has taken it: with two slow readers each holding 6 MB of a 16 MiB budget, a
    /// third gets 503 with `Retry-After`; once they have read, the budget is free again.
    @Test func restAnswersWaitingForTheirReadersShareTheBudget() async throws {
        try await HardeningServer.with({ $0.inFlightBudgetBytes = 16 * 1024 * 1024 }) { server, _ in
            try await Self.putThreeChunks(of: "r", port: server.port)
            let readers = try await Self.unreadRequests(3, Self.restRead, port: server.port, held: 2, bytesEach: 6_000_000)
            defer { for reader in readers { reader.close() } }
            // Neither of the first two has read; the socket holds at most a few megabytes of each.
            readers[2].resumeReading()
            #expect(await readers[2].waitFor("HTTP/1.1 503"))
            #expect(readers[2].receivedText.contains("Retry-After: 1"))
            for reader in readers[..<2] { reader.resumeReading() }
            for reader in readers[..<2] { #expect(await reader.waitFor("rrrr\"}", timeout: .seconds(20))) }
            let again = try await TestHTTPConnection.request(port: server.port, "GET", "/data/c2.json?ns=t")
            #expect(again.status == 200)
            #expect(again.text.utf8.count == 2_000_002)
        }
    }

    /// An event stream's first event (the whole location) is held until its socket has taken
    /// it: while two slow REST readers hold 12 MB of a 16 MiB budget, a stream of the same
    /// 6 MB location (12 MB counted twice) gets 503 and no stream; once they have read, it opens.
    @Test func anEventStreamsFirstEventSharesTheBudget() async throws {
        try await HardeningServer.with({ $0.inFlightBudgetBytes = 16 * 1024 * 1024 }) { server, _ in
            try await Self.putThreeChunks(of: "s", port: server.port)
            let readers = try await Self.unreadRequests(2, Self.restRead, port: server.port, held: 2, bytesEach: 6_000_000)
            defer { for reader in readers { reader.close() } }
            let refused = try await RawConnection.connect(port: server.port)
            defer { refused.close() }
            try await refused.send(Self.streamRead)
            #expect(await refused.waitFor("HTTP/1.1 503"))
            #expect(refused.receivedText.contains("too many answers in progress"))
            #expect(refused.receivedText.contains("Retry-After: 1"))
            for reader in readers { reader.resumeReading() }
            for reader in readers { #expect(await reader.waitFor("ssss\"}", timeout: .seconds(20))) }
            let stream = try await RawConnection.connect(port: server.port)
            defer { stream.close() }
            try await stream.send(Self.streamRead)
            #expect(await stream.waitFor("ssss\"}}", timeout: .seconds(20)))
            #expect(stream.receivedText.hasPrefix("HTTP/1.1 200"))
            #expect(stream.receivedText.contains("event: put"))
        }
    }

    /// An event stream's first event stays held while its reader has not taken it: a stream of
    /// a 6 MB location (12 MB counted twice) that is not read leaves a 16 MiB budget too little
    /// for a 6 MB REST read, which gets 503 until the stream's reader has caught up.
    @Test func anUnreadFirstEventStaysHeld() async throws {
        try await HardeningServer.with({ $0.inFlightBudgetBytes = 16 * 1024 * 1024 }) { server, _ in
            try await Self.putThreeChunks(of: "u", port: server.port)
            let stream = try await Self.unreadRequests(1, Self.streamRead, port: server.port, held: 1, bytesEach: 12_000_000)[0]
            defer { stream.close() }
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/data.json?ns=t").status == 503)
            stream.resumeReading()
            #expect(await stream.waitFor("uuuu\"}}", timeout: .seconds(20)))
            let read = try await TestHTTPConnection.request(port: server.port, "GET", "/data.json?ns=t")
            #expect(read.status == 200)
        }
    }
}
