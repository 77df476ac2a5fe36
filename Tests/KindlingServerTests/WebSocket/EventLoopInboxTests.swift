import KindlingCore
import KindlingServer
import KindlingTesting
import Logging
import Testing

/// Requests reach their namespace in batches, one per event loop turn, and the namespace runs a
/// batch on the loop itself when it is idle: neither may change the order a connection's
/// requests are handled in, or let a connection's end overtake its last requests.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct EventLoopInboxTests {
    static func withServer(_ body: (KindlingServer) async throws -> Void) async throws {
        try await KindlingTesting.withServer({ _ in }, body)
    }

    func json(_ text: String) throws -> JSONValue { try JSONParser.parse(text) }

    /// Many connections pipelining writes at once: each one's answers come in request order, and
    /// a listener sees each connection's values in the order they were written.
    @Test func manyConnectionsPipeliningKeepTheirOrder() async throws {
        try await Self.withServer { server in
            let watcher = try await TestClient.connect(port: server.port)
            _ = try await watcher.request("q", try json(#"{"p":"/c","h":""}"#))
            let writers = 24
            let writes = 40
            var clients: [TestClient] = []
            for _ in 0..<writers { clients.append(try await TestClient.connect(port: server.port)) }
            try await withThrowingTaskGroup(of: [Int].self) { group in
                for (index, client) in clients.enumerated() {
                    group.addTask {
                        for value in 1...writes {
                            try await client.sendRequest("p", try JSONParser.parse(#"{"p":"/c/w\#(index)","d":\#(value)}"#))
                        }
                        var numbers: [Int] = []
                        while numbers.count < writes {
                            let message = try await client.nextMessage()
                            if let number = message["d"]?["r"]?.numberValue {
                                #expect(message["d"]?["b"]?["s"]?.stringValue == "ok")
                                numbers.append(Int(number))
                            }
                        }
                        return numbers
                    }
                }
                for try await numbers in group { #expect(numbers == Array(1...writes)) }
            }
            // Each writer's values reach the listener in the order they were written.
            var seen = [Int](repeating: 0, count: writers)
            while seen.contains(where: { $0 < writes }) {
                let message = try await watcher.nextMessage()
                guard let path = message["d"]?["b"]?["p"]?.stringValue, let value = message["d"]?["b"]?["d"]?.numberValue,
                    let index = Int(path.dropFirst("c/w".count))
                else { continue }
                #expect(Int(value) == seen[index] + 1, "writer \(index): \(Int(value)) after \(seen[index])")
                seen[index] = Int(value)
            }
            for client in clients { await client.close() }
            await watcher.close()
        }
    }

    /// A write sent just before the connection drops is handled before the connection's
    /// onDisconnect writes run.
    @Test func lastWritesGoBeforeTheOnDisconnect() async throws {
        try await Self.withServer { server in
            let watcher = try await TestClient.connect(port: server.port)
            _ = try await watcher.request("q", try json(#"{"p":"/rooms","h":""}"#))
            for round in 0..<10 {
                let leaver = try await TestClient.connect(port: server.port)
                _ = try await leaver.request("o", try json(#"{"p":"/rooms/r\#(round)/state","d":"gone"}"#))
                try await leaver.sendRequest("p", try json(#"{"p":"/rooms/r\#(round)/last","d":"said"}"#))
                await leaver.abort()
                var events: [String] = []
                while events.count < 2 {
                    let message = try await watcher.nextMessage()
                    guard let path = message["d"]?["b"]?["p"]?.stringValue else { continue }
                    events.append(path)
                }
                #expect(events == ["rooms/r\(round)/last", "rooms/r\(round)/state"])
            }
            await watcher.close()
        }
    }
}
