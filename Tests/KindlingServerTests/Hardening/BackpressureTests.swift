import KindlingCore
import KindlingServer
import KindlingTesting
import Testing

/// Memory one client can make the server hold is bounded: pongs count against the slow-reader
/// limit, pipelined requests are not read while answers are not draining, and unfinished
/// bodies and messages share a server-wide budget.
@Suite(.timeLimit(.minutes(2)), .serialized)
struct BackpressureTests {
    @Test func aPingFloodFromAClientThatNeverReadsQueuesNoPongPerPing() async throws {
        try await HardeningServer.with({ $0.maxPendingOutboundBytes = 128 * 1024 }) { server, _ in
            let raw = try await RawConnection.connect(port: server.port, receiveBufferBytes: 4096)
            defer { raw.close() }
            try await raw.upgradeToWebSocket()
            raw.pauseReading()
            let ping = RawConnection.frame(opcode: 9, [UInt8](repeating: 0x70, count: 120))
            let batch = Array([[UInt8]](repeating: ping, count: 1000).joined())
            // 100,000 pings: 12.2 MB of pongs if each got its own, far more than the limit.
            var sent = 0
            for _ in 0..<100 {
                guard (try? await raw.send(batch)) != nil else { break }
                sent += 1000
            }
            raw.resumeReading()
            // Everything the server sent for the flood has arrived once the pong to a later ping
            // has (a stream keeps its order), or once it has closed the connection.
            try? await raw.send(RawConnection.frame(opcode: 9, Array("last".utf8)))
            try await eventually { raw.isClosed || raw.receivedText.contains("last") }
            // Either the server answered only the latest pings, or cut the reader off; it never
            // holds a pong for each ping.
            #expect(raw.receivedCount < sent * 122 / 10, "received \(raw.receivedCount) bytes for \(sent) pings")
            if !raw.isClosed {
                #expect(await raw.waitFor("last"))
            }
        }
    }

    @Test func pipelinedRequestsFromAClientThatNeverReadsAreNotAllAnswered() async throws {
        try await HardeningServer.with { server, _ in
            let value = "\"" + String(repeating: "b", count: 100 * 1024) + "\""
            #expect(try await TestHTTPConnection.request(port: server.port, "PUT", "/big.json?ns=t&print=silent", body: value).status == 204)
            let raw = try await RawConnection.connect(port: server.port, receiveBufferBytes: 4096)
            defer { raw.close() }
            raw.pauseReading()
            // 300 answers of 100 KB (30 MB, far more than the socket buffers hold), then a write
            // that happens only if the server answered every one of them.
            let get = "GET /big.json?ns=t HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            try await raw.send(String(repeating: get, count: 300) + "PUT /marker.json?ns=t HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\n\r\n1")
            try await Self.expectNoMarker(port: server.port, checks: 20)
            // Once the client reads, the rest is answered in order.
            raw.resumeReading()
            #expect(await raw.waitFor("\r\n\r\n1", timeout: .seconds(60)))
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/marker.json?ns=t").text == "1")
        }
    }

    /// Checks `checks` times, a quarter of a second apart, that `/marker` of namespace `t` was
    /// not written.
    static func expectNoMarker(port: Int, checks: Int) async throws {
        let observer = try await TestHTTPConnection.connect(port: port)
        defer { observer.close() }
        for _ in 0..<checks {
            // Deliberate hold, not a wait: a negative check (the marker must NOT be written in
            // this window), which no event can show.
            try await Task.sleep(for: .milliseconds(250))
            #expect(try await observer.request("GET", "/marker.json?ns=t").text == "null")
        }
    }

    /// Stores a string of `valueBytes` at `/big` of namespace `t`, then opens a realtime
    /// connection that stops reading and sends `gets` reads of it in one write, followed by a
    /// set with body `then` if given.
    static func readerFallingBehind(port: Int, valueBytes: Int, gets: Int, then set: String? = nil) async throws -> RawConnection {
        let value = "\"" + String(repeating: "b", count: valueBytes) + "\""
        #expect(try await TestHTTPConnection.request(port: port, "PUT", "/big.json?ns=t&print=silent", body: value).status == 204)
        let raw = try await RawConnection.connect(port: port, receiveBufferBytes: 4096)
        try await raw.upgradeToWebSocket(namespace: "t")
        raw.pauseReading()
        var requests: [UInt8] = []
        for number in 1...gets {
            requests += RawConnection.frame(opcode: 1, Array(#"{"t":"d","d":{"r":\#(number),"a":"g","b":{"p":"/big","q":{}}}}"#.utf8))
        }
        if let set { requests += RawConnection.frame(opcode: 1, Array(#"{"t":"d","d":{"r":\#(gets + 1),"a":"p","b":\#(set)}}"#.utf8)) }
        try await raw.send(requests)
        return raw
    }

    /// A realtime `g` can ask for far more than it sends: a connection whose answers are not
    /// draining is not read, so a marker write sent after 300 reads of 100 KB (30 MB) waits
    /// until the client reads; then everything is answered, in order.
    @Test func realtimeRequestsFromAReaderThatFellBehindAreNotRead() async throws {
        try await HardeningServer.with { server, _ in
            let raw = try await Self.readerFallingBehind(port: server.port, valueBytes: 100 * 1024, gets: 300)
            defer { raw.close() }
            // Sent once the server has stopped reading (how many of the 300 it read first is its
            // own business): a server still reading would take it. It stops once more than its
            // pause mark waits for the reader, which the backlog it then counts shows.
            #expect(try await eventually { try await PrometheusText.backlogBytes(port: server.port) > 0 })
            try await raw.send(RawConnection.frame(opcode: 1, Array(#"{"t":"d","d":{"r":301,"a":"p","b":{"p":"/marker","d":1}}}"#.utf8)))
            try await Self.expectNoMarker(port: server.port, checks: 8)
            raw.resumeReading()
            #expect(await raw.waitFor(#""r":301"#, timeout: .seconds(60)))
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/marker.json?ns=t").text == "1")
        }
    }

    /// A batch of reads asking for more than the connection may have waiting closes it before
    /// the answers are built past that (28 KB of `g` could otherwise make the server build
    /// gigabytes); the rest of the batch is left. A batch within the limit is answered whole.
    @Test func aBatchOfReadsAskingForMoreThanTheLimitClosesTheConnection() async throws {
        try await HardeningServer.with({ $0.maxPendingOutboundBytes = 8 * 1024 * 1024 }) { server, logs in
            let within = try await Self.readerFallingBehind(port: server.port, valueBytes: 1024 * 1024, gets: 5)
            defer { within.close() }
            within.resumeReading()
            #expect(await within.waitFor(#""r":5"#, timeout: .seconds(30)))
            let raw = try await Self.readerFallingBehind(port: server.port, valueBytes: 1024 * 1024, gets: 400, then: #"{"p":"/marker","d":1}"#)
            defer { raw.close() }
            #expect(await logs.waitFor("asked for more than 8388608 bytes at once"))
            raw.resumeReading()
            #expect(await raw.waitForClose(timeout: .seconds(30)))
            #expect(!within.isClosed)
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/marker.json?ns=t").text == "null")
        }
    }

    /// Queries that no index answers read every child of their location: a batch of them over a
    /// large location could hold the namespace for minutes, so the queries of a batch past the
    /// limit are refused with `too_big` (the connection goes on, and the batch's other requests
    /// are taken). Queries an index or the key order answer cost nothing towards it.
    @Test func queriesOfABatchScanningMoreThanTheLimitAreRefused() async throws {
        try await HardeningServer.with({ $0.connectionLimits.maxScannedChildren = 1_000 }) { server, logs in
            let children = (0..<300).map { #""c\#($0)":{"n":\#($0)}"# }.joined(separator: ",")
            #expect(
                try await TestHTTPConnection.request(port: server.port, "PUT", "/many.json?ns=t&print=silent", body: "{\(children)}").status == 204)
            func batch(_ query: String, count: Int) async throws -> RawConnection {
                let raw = try await RawConnection.connect(port: server.port)
                try await raw.upgradeToWebSocket(namespace: "t")
                var requests: [UInt8] = []
                for number in 1...count {
                    requests += RawConnection.frame(opcode: 1, Array(#"{"t":"d","d":{"r":\#(number),"a":"g","b":{"p":"/many","q":\#(query)}}}"#.utf8))
                }
                requests += RawConnection.frame(opcode: 1, Array(#"{"t":"d","d":{"r":\#(count + 1),"a":"p","b":{"p":"/marker","d":1}}}"#.utf8))
                try await raw.send(requests)
                return raw
            }
            // Three scans of 300 fit; by key, none counts.
            let within = try await batch(#"{"i":"n","l":1}"#, count: 3)
            defer { within.close() }
            #expect(await within.waitFor(#""r":4"#, timeout: .seconds(30)))
            let byKey = try await batch(#"{"i":".key","l":1}"#, count: 20)
            defer { byKey.close() }
            #expect(await byKey.waitFor(#""r":21"#, timeout: .seconds(30)))
            #expect(try await TestHTTPConnection.request(port: server.port, "DELETE", "/marker.json?ns=t").status == 200)
            let over = try await batch(#"{"i":"n","l":1}"#, count: 20)
            defer { over.close() }
            #expect(await over.waitFor(#""r":21"#, timeout: .seconds(30)))
            let answers = over.receivedText
            #expect(answers.ranges(of: #""s":"too_big""#).count == 17, "3 scans of 300 fit the 1000; the 17 after are refused")
            #expect(!over.isClosed)
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/marker.json?ns=t").text == "1")
        }
    }

    /// Readers that fell behind share a server-wide budget for what waits for them: several
    /// connections, each within its own limit and the budget, cannot together hold more than
    /// it. The one whose backlog grows past it is cut off; one already held is not.
    @Test func realtimeReadersThatFellBehindShareAServerWideBudget() async throws {
        try await HardeningServer.with({ $0.pendingOutboundBudgetBytes = 20 * 1024 * 1024 }) { server, logs in
            var readers: [RawConnection] = []
            defer { for reader in readers { reader.close() } }
            // Each reader asks for 12 MiB in one read: within its 64 MiB limit and the budget,
            // and at least 8 MiB of it waits in the server (the kernel takes at most 4 MiB of a
            // socket's), so three exceed the budget. Each reader's answers are all queued before
            // the next asks.
            for index in 1...3 {
                if index > 1 {
                    #expect(try await eventually { try await PrometheusText.requests(port: server.port, "get") >= Double(12 * (index - 1)) })
                }
                readers.append(try await Self.readerFallingBehind(port: server.port, valueBytes: 1024 * 1024, gets: 12))
            }
            #expect(await logs.waitFor("server-wide budget"))
            // Once they read again, a reader cut off finds its connection closed after what the
            // kernel had already taken; the first, held within the budget, gets all its answers.
            for reader in readers { reader.resumeReading() }
            #expect(await readers[0].waitFor(#""r":12"#, timeout: .seconds(30)))
            #expect(!readers[0].isClosed)
            try await eventually(within: .seconds(10), every: .milliseconds(50)) { readers.contains(where: \.isClosed) }
            #expect(readers.contains { $0.isClosed })
            // The server goes on serving everyone else.
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/big.json?ns=t&shallow=true").status == 200)
        }
    }

    @Test func unfinishedBodiesShareAServerWideBudget() async throws {
        try await HardeningServer.with({ $0.inFlightBudgetBytes = 1024 * 1024 }) { server, logs in
            let first = try await RawConnection.connect(port: server.port)
            defer { first.close() }
            try await first.send(
                "PUT /a.json?ns=t HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 500000\r\n\r\n\"" + String(repeating: "a", count: 450_000))
            let second = try await RawConnection.connect(port: server.port)
            try await second.send(
                "PUT /b.json?ns=t HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 500000\r\n\r\n\"" + String(repeating: "b", count: 450_000))
            // Once the server has read both (900,002 bytes held).
            #expect(try await eventually { try await PrometheusText.unfinishedBytes(port: server.port) >= 900_002 })
            let third = try await RawConnection.connect(port: server.port)
            defer { third.close() }
            try? await third.send(
                "PUT /c.json?ns=t HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 300000\r\n\r\n\"" + String(repeating: "c", count: 250_000))
            #expect(await third.waitFor("HTTP/1.1 503"))
            #expect(await third.waitForClose())
            #expect(logs.contains("refusing a request body"))
            second.close()
            // Once the server has seen the close and given the second's share back.
            #expect(try await eventually { try await PrometheusText.unfinishedBytes(port: server.port) <= 450_001 })
            // The first finishes and is served (its parse takes as much again as its text);
            // then the budget is free again: a string of half the budget needs all of it.
            try await first.send(String(repeating: "a", count: 49_998) + "\"")
            #expect(await first.waitFor("HTTP/1.1 200"))
            let again = try await TestHTTPConnection.request(
                port: server.port, "PUT", "/c.json?ns=t", body: "\"" + String(repeating: "c", count: 500_000) + "\"")
            #expect(again.status == 200)
        }
    }

    /// A body over half the budget could never be parsed beside its own bytes, however idle the
    /// server: 413, so the client does not retry it, whether its length is declared or not.
    @Test func aBodyThatCouldNeverFitTheBudgetIsRefusedFor413() async throws {
        try await HardeningServer.with({ $0.inFlightBudgetBytes = 1024 * 1024 }) { server, _ in
            let declared = try await RawConnection.connect(port: server.port)
            defer { declared.close() }
            try await declared.send("PUT /a.json?ns=t HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 600000\r\n\r\n")
            #expect(await declared.waitFor("HTTP/1.1 413"))
            #expect(await declared.waitFor("--max-unfinished-mb"))
            #expect(await declared.waitForClose())
            let chunked = try await RawConnection.connect(port: server.port)
            defer { chunked.close() }
            let chunk = String(repeating: "a", count: 100_000)
            let chunkFrame = String(chunk.utf8.count, radix: 16) + "\r\n" + chunk + "\r\n"
            try await chunked.send("PUT /b.json?ns=t HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n" + "1\r\n\"\r\n")
            for _ in 0..<6 { try? await chunked.send(chunkFrame) }
            #expect(await chunked.waitFor("HTTP/1.1 413"))
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/.json?ns=t").text == "null")
            // Just under half still fits.
            let fits = try await TestHTTPConnection.request(
                port: server.port, "PUT", "/c.json?ns=t", body: "\"" + String(repeating: "c", count: 500_000) + "\"")
            #expect(fits.status == 200)
        }
    }

    /// Parsing a body takes far more memory than its bytes, and that is reserved from the same
    /// budget before the body is parsed: a body of more small values than the budget can ever
    /// parse beside its own bytes is refused (413, nothing written), while one that fits is
    /// written, and its reservation given back once it is answered, or once its write is done
    /// when the client has gone.
    @Test func whatParsingABodyTakesIsReservedBeforeItIsParsed() async throws {
        try await HardeningServer.with({ $0.inFlightBudgetBytes = 1024 * 1024 }) { server, _ in
            let values = { (count: Int) in "[" + Array(repeating: "0", count: count).joined(separator: ",") + "]" }
            // 10,001 values at 128 bytes each: more than 1 MiB, although the body is 20 KB; and
            // 8,101 (1,036,928 bytes) fit only without the body's own 16,201 and their copy.
            for count in [10_000, 8_100] {
                let tooMany = try await TestHTTPConnection.request(port: server.port, "PUT", "/a.json?ns=t", body: values(count))
                #expect(tooMany.status == 413, "\(count)")
                #expect(tooMany.text.contains("--max-unfinished-mb"))
            }
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/a.json?ns=t").text == "null")
            // Half a megabyte of parsing, three times in a row: each gives its share back.
            for _ in 0..<3 {
                let fits = try await TestHTTPConnection.request(port: server.port, "PUT", "/a.json?ns=t", body: values(4_000))
                #expect(fits.status == 200)
            }
            // Clients that send their write and hang up without its answer: their shares come
            // back too, so a write that needs most of the budget is then taken.
            for index in 0..<10 {
                let raw = try await RawConnection.connect(port: server.port)
                let body = values(4_000)
                try await raw.send("PUT /gone/\(index).json?ns=t HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
                raw.close()
            }
            var status = 0
            try await eventually(within: .seconds(10), every: .milliseconds(50)) {
                status = try await TestHTTPConnection.request(port: server.port, "PUT", "/b.json?ns=t", body: values(7_000)).status
                return status == 200
            }
            #expect(status == 200)
            // Strings count as one value each, whatever they hold, and their copy as their length.
            let text = "\"" + String(repeating: "[:,", count: 100_000) + "\""
            #expect(try await TestHTTPConnection.request(port: server.port, "PUT", "/c.json?ns=t", body: text).status == 200)
        }
    }

    @Test func partlyReceivedRealtimeMessagesShareTheBudget() async throws {
        try await HardeningServer.with({ $0.inFlightBudgetBytes = 100 * 1024 }) { server, logs in
            let piece = RawConnection.frame(opcode: 1, [UInt8](repeating: 0x78, count: 16_384))
            let first = try await RawConnection.connect(port: server.port)
            defer { first.close() }
            try await first.upgradeToWebSocket()
            try await first.send(RawConnection.frame(opcode: 1, Array("10".utf8)) + piece + piece + piece + piece)
            // Once the server holds the first's four pieces (65,536 bytes) against the budget:
            // taken, not refused, so the first is not closed for them.
            #expect(try await eventually { try await PrometheusText.unfinishedBytes(port: server.port) >= 65_536 })
            #expect(!first.isClosed)
            let second = try await RawConnection.connect(port: server.port)
            defer { second.close() }
            try await second.upgradeToWebSocket()
            try? await second.send(RawConnection.frame(opcode: 1, Array("10".utf8)) + piece + piece + piece + piece)
            #expect(await second.waitForClose(timeout: .seconds(5)))
            #expect(second.closeCode == 1013)
            #expect(logs.contains("too many partly received messages"))
            #expect(!first.isClosed)
        }
    }

    @Test func partlyReceivedFramesShareTheBudget() async throws {
        try await HardeningServer.with({ $0.inFlightBudgetBytes = 100 * 1024 }) { server, logs in
            // A frame of 80,000 bytes, sent but for its last 10,000.
            let unfinished = Array(RawConnection.frame(opcode: 1, [UInt8](repeating: 0x78, count: 80_000)).dropLast(10_000))
            let first = try await RawConnection.connect(port: server.port)
            defer { first.close() }
            try await first.upgradeToWebSocket()
            try await first.send(unfinished)
            // Once the server holds the first's unfinished frame (70,000 bytes of payload, and
            // its header) against the budget: taken, not refused, so the first is not closed for it.
            #expect(try await eventually { try await PrometheusText.unfinishedBytes(port: server.port) >= 70_000 })
            #expect(!first.isClosed)
            let second = try await RawConnection.connect(port: server.port)
            defer { second.close() }
            try await second.upgradeToWebSocket()
            try? await second.send(unfinished)
            #expect(await second.waitForClose(timeout: .seconds(5)))
            #expect(second.closeCode == 1013)
            #expect(logs.contains("too many partly received messages"))
            #expect(!first.isClosed)
        }
    }
}
